package torchserve

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/runner/plan"
)

// TorchServe's default ports (config.properties inference_address,
// management_address, metrics_address).
const (
	defaultInferencePort  = "8080"
	defaultManagementPort = "8081"
	defaultMetricsPort    = "8082"
)

// off is the value of management_url or metrics_url that turns the API off.
const off = "none"

// settings is the server.torchserve block.
type settings struct {
	// ManagementURL is the management API (GET /models/{model}); default
	// the inference URL's host on port 8081; "none" skips the model and
	// worker checks.
	ManagementURL string `json:"management_url"`
	// MetricsURL is the metrics API (GET /metrics, Prometheus text);
	// default the inference URL's host on port 8082; "none" measures
	// without the server's figures.
	MetricsURL string `json:"metrics_url"`
}

// endpoints are the three APIs' base URLs ("" for an API turned off) and
// whether each was given or derived.
type endpoints struct {
	inference, management, metrics string
	managementSet, metricsSet      bool
}

// resolveEndpoints reads the kind block and derives what it leaves out
// from the inference URL.
func resolveEndpoints(srv plan.Server, inference string) (endpoints, error) {
	var s settings
	if err := kinds.DecodeOptions(srv, &s); err != nil {
		return endpoints{}, err
	}
	field := kinds.OptionsField(srv)
	base, err := baseURL(inference, defaultInferencePort)
	if err != nil {
		return endpoints{}, failure.Invalid(fmt.Errorf("%s.url: %w", kinds.ServerField(srv), err))
	}
	ep := endpoints{inference: base, managementSet: s.ManagementURL != "", metricsSet: s.MetricsURL != ""}
	for _, e := range []struct {
		key, given, port string
		dst              *string
	}{
		{"management_url", s.ManagementURL, defaultManagementPort, &ep.management},
		{"metrics_url", s.MetricsURL, defaultMetricsPort, &ep.metrics},
	} {
		switch {
		case e.given == off:
		case e.given != "":
			u, err := baseURL(e.given, "")
			if err != nil {
				return endpoints{}, failure.Invalid(fmt.Errorf("%s.%s: %w", field, e.key, err))
			}
			*e.dst = u
		default:
			*e.dst = siblingURL(base, e.port)
		}
	}
	return ep, nil
}

// baseURL normalises host:port or http(s)://host:port[/prefix] to
// scheme://host:port[/prefix] without a trailing slash.
func baseURL(s, defaultPort string) (string, error) {
	raw := strings.TrimRight(strings.TrimSpace(s), "/")
	if raw == "" {
		return "", fmt.Errorf("empty URL")
	}
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("%q: TorchServe's APIs are http:// or https://, not %s://", s, u.Scheme)
	}
	if u.Host == "" {
		return "", fmt.Errorf("%q has no host", s)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("%q: a base URL takes no query or fragment", s)
	}
	if u.Port() == "" && defaultPort != "" && u.Scheme == "http" {
		u.Host = net.JoinHostPort(u.Hostname(), defaultPort)
	}
	return u.String(), nil
}

// siblingURL is base's scheme and host on another port: where TorchServe
// puts its other APIs by default.
func siblingURL(base, port string) string {
	u, err := url.Parse(base)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + net.JoinHostPort(u.Hostname(), port)
}
