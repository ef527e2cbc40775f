package kserve

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/kinds/kserve/client"
	"github.com/perfscen/perfscen/runner/plan"
)

func TestProtocolsOfPlan(t *testing.T) {
	p := &plan.Plan{Servers: []plan.Server{{Protocol: "http"}}, Points: []plan.Point{{Protocol: "grpc"}, {Protocol: "http"}, {Protocol: "grpc"}}}
	if got := fmt.Sprint(protocols(p)); got != "[grpc http]" {
		t.Fatalf("protocols = %s", got)
	}
	if got := fmt.Sprint(protocols(&plan.Plan{Servers: []plan.Server{{Protocol: "grpc"}}})); got != "[grpc]" {
		t.Fatalf("protocols of an empty plan = %s", got)
	}
}

// server.kserve.connections reaches the client of either protocol, and
// with it the workers give up their own connections for the shared ones.
func TestClientOptionsConnections(t *testing.T) {
	for _, tc := range []struct {
		name    string
		srv     plan.Server
		want    int
		wantErr string
	}{
		{name: "default", srv: plan.Server{}, want: 0},
		{name: "shared", srv: plan.Server{Options: map[string]any{"connections": 4}}, want: 4},
		{name: "one", srv: plan.Server{Options: map[string]any{"connections": 1, "grpc_compression": "gzip"}}, want: 1},
		{name: "negative", srv: plan.Server{Options: map[string]any{"connections": -1}}, wantErr: "server.kserve.connections: -1 is negative"},
		{name: "named", srv: plan.Server{Name: "a", Options: map[string]any{"connections": -2}}, wantErr: "servers.a.kserve.connections: -2 is negative"},
		{name: "not a number", srv: plan.Server{Options: map[string]any{"connections": "many"}}, wantErr: "server.kserve"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, proto := range []plan.Protocol{plan.ProtocolHTTP, plan.ProtocolGRPC} {
				srv := tc.srv
				srv.Protocol = proto
				p := &plan.Plan{Servers: []plan.Server{srv}}
				opts, err := clientOptions(p, proto, "127.0.0.1:1", nil)
				if tc.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tc.wantErr) || failure.KindOf(err) != failure.InvalidInput {
						t.Fatalf("%s: err = %v, want an invalid-input error containing %q", proto, err, tc.wantErr)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", proto, err)
				}
				if opts.MaxConnections != tc.want {
					t.Fatalf("%s: MaxConnections = %d, want %d", proto, opts.MaxConnections, tc.want)
				}
				c, err := client.New(context.Background(), opts)
				if err != nil {
					t.Fatalf("%s: %v", proto, err)
				}
				own := c.(client.ConnClient).NewConn() != nil
				c.Close()
				if own != (tc.want == 0) {
					t.Fatalf("%s: own connection per worker = %v with connections %d", proto, own, tc.want)
				}
			}
		})
	}
}

// server.kserve.busy_poll reaches the client of either protocol; what is
// not a duration from 0 to 10ms is refused, naming the field.
func TestClientOptionsBusyPoll(t *testing.T) {
	for _, tc := range []struct {
		value   any
		want    time.Duration
		wantErr string
	}{
		{value: nil, want: 0},
		{value: "100us", want: 100 * time.Microsecond},
		{value: "0s", want: 0},
		{value: "10ms", want: 10 * time.Millisecond},
		{value: "11ms", wantErr: `server.kserve.busy_poll: "11ms" is not a duration from 0 to 10ms`},
		{value: "-1us", wantErr: `server.kserve.busy_poll: "-1us" is not a duration`},
		{value: "fast", wantErr: `server.kserve.busy_poll: "fast" is not a duration`},
	} {
		for _, proto := range []plan.Protocol{plan.ProtocolHTTP, plan.ProtocolGRPC} {
			srv := plan.Server{Protocol: proto}
			if tc.value != nil {
				srv.Options = map[string]any{"busy_poll": tc.value}
			}
			opts, err := clientOptions(&plan.Plan{Servers: []plan.Server{srv}}, proto, "127.0.0.1:1", nil)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || failure.KindOf(err) != failure.InvalidInput {
					t.Errorf("%v %s: err = %v, want an invalid-input error containing %q", tc.value, proto, err, tc.wantErr)
				}
				continue
			}
			if err != nil || opts.BusyPoll != tc.want {
				t.Errorf("%v %s: BusyPoll = %v, %v; want %v", tc.value, proto, opts.BusyPoll, err, tc.want)
			}
		}
	}
}
