package scenariorun

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/procacct"
	"github.com/perfscen/perfscen/internal/prom"
	"github.com/perfscen/perfscen/runner/plan"
)

// locateProcesses finds each server's process for its CPU time and run
// queue delay per inference (procacct.Locate): the embedded server's own
// model threads, the process listening on a local server's port, the one
// server.process names, or a remote server's process_cpu_seconds_total.
// what says, per server name, what is measured or why nothing is (the
// result's ServerInfo.Process). An error is a process the scenario names
// that cannot be read.
func locateProcesses(ctx context.Context, p *plan.Plan, servers map[string]kinds.Server) (map[string]procacct.Source, map[string]string, func(), error) {
	out := map[string]procacct.Source{}
	closeAll := func() {
		for _, s := range out {
			s.Close()
		}
	}
	what := map[string]string{}
	for _, srv := range p.Servers {
		t := procacct.Target{
			Field:        kinds.ServerField(srv) + ".process",
			Config:       procacct.Config{Off: srv.Process.Off, PID: srv.Process.PID, PIDFile: srv.Process.PIDFile, Cgroup: srv.Process.Cgroup},
			Addrs:        hostPorts(srv),
			MetricsURL:   srv.MetricsURL,
			Self:         os.Getpid(),
			Instructions: true,
		}
		if srv.Process.Where != "" {
			t.Field = srv.Process.Where
		}
		if a, ok := servers[srv.Name].(kinds.Accounted); ok {
			t.Own, t.Inside = a.Accounting()
		}
		if srv.MetricsURL != "" {
			t.Scrape = scrapeProcessCPU(srv.MetricsURL)
		}
		loc, err := procacct.Locate(ctx, t)
		if err != nil {
			closeAll()
			if srv.Name != "" {
				return nil, nil, nil, fmt.Errorf("server %s: %w", srv.Name, err)
			}
			return nil, nil, nil, err
		}
		desc := strings.TrimPrefix(loc.Note, "server CPU per inference: ")
		if loc.Source != nil {
			out[srv.Name] = loc.Source
			if n := loc.Source.Notes(); len(n) > 0 {
				desc += "; " + strings.Join(n, "; ")
			}
		}
		what[srv.Name] = desc
	}
	return out, what, closeAll, nil
}

// hostPorts are the host:port addresses a server's points reach.
func hostPorts(srv plan.Server) []string {
	var out []string
	for _, u := range []string{srv.GRPCURL, srv.HTTPURL, srv.URL} {
		if u == "" {
			continue
		}
		hp := u
		if strings.Contains(u, "://") {
			pu, err := url.Parse(u)
			if err != nil {
				continue
			}
			hp = pu.Host
			if pu.Port() == "" {
				switch pu.Scheme {
				case "https":
					hp += ":443"
				default:
					hp += ":80"
				}
			}
		}
		out = append(out, hp)
	}
	return out
}

// scrapeProcessCPU reads a metrics page for process_cpu_seconds_total.
func scrapeProcessCPU(metricsURL string) procacct.Scrape {
	u := metricsURL
	if !strings.Contains(u, "://") {
		u = "http://" + u
	}
	if pu, err := url.Parse(u); err == nil && (pu.Path == "" || pu.Path == "/") {
		u = strings.TrimSuffix(u, "/") + "/metrics"
	}
	client := &http.Client{Timeout: 5 * time.Second}
	return func(ctx context.Context) ([]prom.Sample, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("%s: %s", u, resp.Status)
		}
		return prom.Parse(resp.Body, func(name string) bool { return name == procacct.ProcessCPU })
	}
}
