package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/scenario"
)

func init() { register(newPlanCmd) }

func newPlanCmd(e *env) *cobra.Command {
	var (
		asJSON bool
		set    []string
	)
	cmd := &cobra.Command{
		Use:   "plan FILE",
		Short: "Show the run matrix a scenario expands to, and how long it should take",
		Long: `plan loads a scenario and prints every point the run would measure, in
execution order: model alias, point id, protocol, shared memory, batch size,
load and interleaving group (points with the same group are compared and run
in alternating trials); with mixes, the step each point runs together with. It ends with an estimate of the wall time and the
assumption behind it. Nothing is sent to any server.`,
		Example: `  perfscen plan scenarios/triton-grpc-shm-sweep.yaml
  perfscen plan --json scenarios/engine-comparison.yaml | jq '.points | length'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runPlan(e, args[0], asJSON, set) },
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the resolved plan as JSON (secret header values are never included)")
	cmd.Flags().StringArrayVar(&set, "set", nil, "plan the file with an override laid over it, path=value (as perfscen run --set)")
	return cmd
}

func runPlan(e *env, file string, asJSON bool, set []string) error {
	p, err := scenario.LoadPlanWith(file, e.getenv, set)
	if err != nil {
		printScenarioError(e, file, err)
		return exitSilently(exitcode.Invalid)
	}
	if asJSON {
		b, err := json.MarshalIndent(p, "", "  ")
		if err != nil {
			return fmt.Errorf("encoding plan: %w", err)
		}
		_, err = fmt.Fprintf(e.stdout, "%s\n", b)
		return err
	}
	return printPlan(e.stdout, p)
}

func printPlan(w io.Writer, p *plan.Plan) error {
	if !p.Named() {
		fmt.Fprintf(w, "scenario %s (%s), server: %s\n\n", p.Scenario, p.ScenarioPath, serverText(p.Server()))
	} else {
		fmt.Fprintf(w, "scenario %s (%s), servers:\n", p.Scenario, p.ScenarioPath)
		for _, s := range p.Servers {
			fmt.Fprintf(w, "  %s: %s\n", s.Name, serverText(s))
		}
		fmt.Fprintln(w)
	}
	rows := make([][]string, len(p.Points))
	for i, pt := range p.Points {
		group := "-"
		if pt.Group != 0 {
			group = strconv.Itoa(pt.Group)
		}
		load := loadText(pt.Load)
		if st := pt.Stage; st != nil {
			load = fmt.Sprintf("stage %d: %s → %s over %s", st.Index, strconv.FormatFloat(st.From, 'f', -1, 64), load, st.Duration)
		}
		rows[i] = []string{pt.Model, pt.ID, string(pt.Protocol), string(pt.SharedMemory), strconv.Itoa(pt.BatchSize), load, group}
		if len(p.Mixes) > 0 {
			// Points of one mix step run at the same time.
			rows[i] = append(rows[i], strconv.Itoa(pt.Together))
		}
	}
	head := []string{"model", "point", "protocol", "shm", "batch", "load", "group"}
	if len(p.Mixes) > 0 {
		head = append(head, "together")
	}
	if err := renderTable(w, head, rows); err != nil {
		return err
	}
	for _, s := range p.Searches {
		least, most := scenario.SearchProbes(&s)
		end := strconv.FormatFloat(s.End, 'f', -1, 64)
		if s.End == 0 {
			end = "no end"
		}
		fmt.Fprintf(w, "search %s: %s, %s over %s %s..%s by %s, %d to %d probe(s), %s\n", s.PointID(), s.Condition.Text, s.Method,
			strings.TrimPrefix(s.Metric, "max_"), strconv.FormatFloat(s.Start, 'f', -1, 64), end, strconv.FormatFloat(s.Step, 'f', -1, 64),
			least, most, loadText(s.Template.Load))
	}
	fmt.Fprintf(w, "\n%s, %s, measurement: %s\n", plural(len(p.Points), "point"), plural(len(p.Models), "model"), measurementText(p.Measurement))
	fmt.Fprintf(w, "checks: %s\n", checksText(p.Checks))
	est := scenario.Estimate(p)
	fmt.Fprintf(w, "estimated wall time: %s at best, %s at worst", roundDuration(est.Total), roundDuration(est.Worst))
	if est.Extra > 0 {
		fmt.Fprintf(w, " (%s of it extra trials)", roundDuration(est.Extra))
	}
	fmt.Fprintf(w, "\n  (%s; assumes the machine keeps up with the windows, so a busy one takes longer; excludes server start-up and connection set-up)\n", est.Assumption)
	return nil
}

// serverText says where one server's requests go.
func serverText(s plan.Server) string {
	where := s.URL
	switch {
	case s.Embedded && s.EmbeddedFlavor != "":
		where = "embedded reference server (" + s.EmbeddedFlavor + ")"
	case s.Embedded && s.Kind != "" && s.Kind != plan.KindKServe && s.Kind != plan.KindOpenAI:
		where = "embedded reference server (" + s.Kind + " API)"
	case s.Embedded:
		where = "embedded reference server"
	case s.HTTPURL != "" || s.GRPCURL != "":
		var parts []string
		for _, proto := range []plan.Protocol{plan.ProtocolHTTP, plan.ProtocolGRPC} {
			if u := s.URLFor(proto); u != "" {
				parts = append(parts, string(proto)+" "+u)
			}
		}
		where = strings.Join(parts, ", ")
	case s.URL == "" && s.Kind != "":
		// An in-process kind (triton_c_api) has no address.
		where = s.Kind + ", in process"
	}
	if s.Name != "" && s.Embedded && len(s.EmbeddedModels) > 0 {
		where += " with " + embeddedParamsText(s.EmbeddedModels)
	}
	return where
}

// embeddedParamsText lists embedded model parameters, sorted, so two
// embedded servers of one plan can be told apart.
func embeddedParamsText(m map[string]map[string]string) string {
	var parts []string
	for _, model := range slices.Sorted(maps.Keys(m)) {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(m[model])) {
			kv = append(kv, k+"="+m[model][k])
		}
		parts = append(parts, model+" {"+strings.Join(kv, ", ")+"}")
	}
	return strings.Join(parts, ", ")
}

func loadText(l plan.Load) string {
	var s string
	switch l.Mode {
	case plan.LoadRequestRate:
		s = fmt.Sprintf("rate %s/s %s", strconv.FormatFloat(l.Rate, 'f', -1, 64), l.Distribution)
	case plan.LoadIterations:
		s = fmt.Sprintf("%d iterations, concurrency %d", l.Iterations, l.Concurrency)
	default:
		s = fmt.Sprintf("concurrency %d", l.Concurrency)
	}
	if l.Async {
		s += ", async"
	}
	if l.Streaming {
		s += ", streaming"
	}
	return s
}

func measurementText(m plan.Measurement) string {
	var b strings.Builder
	if m.Mode == plan.CountWindows {
		fmt.Fprintf(&b, "count windows of %d requests", m.RequestCount)
	} else {
		fmt.Fprintf(&b, "time windows of %s", m.Window)
	}
	stab := "average latency"
	if m.Percentile > 0 {
		stab = fmt.Sprintf("p%d", m.Percentile)
	}
	fmt.Fprintf(&b, ", stable within %s%% (%s) in at most %d windows, then %d trials",
		strconv.FormatFloat(m.StabilityPct, 'f', -1, 64), stab, m.MaxTrials, m.Trials)
	if m.Warmup > 0 {
		fmt.Fprintf(&b, ", warm-up %s", m.Warmup)
	}
	return b.String()
}

func checksText(c plan.Checks) string {
	var parts []string
	if n := len(c.Thresholds); n > 0 {
		parts = append(parts, plural(n, "threshold"))
	}
	if n := len(c.Comparisons); n > 0 {
		parts = append(parts, plural(n, "comparison"))
	}
	if c.Baseline != nil {
		parts = append(parts, "baseline "+c.Baseline.Path)
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func roundDuration(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Second)
}

// renderTable draws a table: box-drawing characters on a terminal, plain
// ASCII otherwise so CI logs and pipes stay readable.
func renderTable(w io.Writer, header []string, rows [][]string) error {
	style := tw.StyleASCII
	if isTerminal(w) {
		style = tw.StyleLight
	}
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(style)})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
	)
	t.Header(toCells(header)...)
	for _, r := range rows {
		if err := t.Append(toCells(r)...); err != nil {
			return fmt.Errorf("rendering table: %w", err)
		}
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("rendering table: %w", err)
	}
	return nil
}

func toCells(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
