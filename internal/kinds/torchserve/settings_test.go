package torchserve

import (
	"strings"
	"testing"

	"github.com/perfscen/perfscen/runner/plan"
)

func TestResolveEndpoints(t *testing.T) {
	tests := []struct {
		name    string
		url     string
		options map[string]any
		want    endpoints
		err     string
	}{
		{name: "defaults from host:port", url: "10.0.0.5:8080",
			want: endpoints{inference: "http://10.0.0.5:8080", management: "http://10.0.0.5:8081", metrics: "http://10.0.0.5:8082"}},
		{name: "no port means TorchServe's", url: "http://ts.example/",
			want: endpoints{inference: "http://ts.example:8080", management: "http://ts.example:8081", metrics: "http://ts.example:8082"}},
		{name: "https keeps its scheme", url: "https://ts.example:8443",
			want: endpoints{inference: "https://ts.example:8443", management: "https://ts.example:8081", metrics: "https://ts.example:8082"}},
		{name: "given and off", url: "127.0.0.1:18080", options: map[string]any{"management_url": "127.0.0.1:18081", "metrics_url": "none"},
			want: endpoints{inference: "http://127.0.0.1:18080", management: "http://127.0.0.1:18081", managementSet: true, metricsSet: true}},
		{name: "unknown key", url: "h:1", options: map[string]any{"managment_url": "x"}, err: `server.torchserve: json: unknown field "managment_url"`},
		{name: "bad scheme", url: "h:1", options: map[string]any{"metrics_url": "grpc://h:2"}, err: "server.torchserve.metrics_url:"},
		{name: "bad url", url: "grpc://h:7070", err: "server.url:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := resolveEndpoints(plan.Server{Kind: Name, Options: tt.options}, tt.url)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
