package conformance

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfscen/perfscen/internal/kinds/kserve/client"
	"github.com/perfscen/perfscen/internal/memnet"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/internal/tensor"
)

// The client's split of a call's time, on testing/synctest's clock with
// the reference server's delay model (a known service time) on an
// in-memory network: for tensors from 1 KB to 64 MB, over both protocols
// and both kinds of connection, the response wait covers the server's
// service time, and send/recv plus wait is the call's time. Before the
// own gRPC connection stamped the reply at its HEADERS frame, a window
// update arriving while a large request went out counted as the reply,
// and the wait read 0.
func TestTimingSplitAnyTensorSize(t *testing.T) {
	const service = 20 * time.Millisecond
	for _, floats := range []int{256, 64 << 10, 1_228_800, 16 << 20} { // 1 KB, 256 KB, 4.9 MB, 64 MB
		for _, k := range transports {
			t.Run(fmt.Sprintf("%s/%dB", k, 4*floats), func(t *testing.T) {
				if raceEnabled && floats > 4<<20 {
					t.Skip("64 MiB under the race detector takes tens of seconds; make test runs it without -race")
				}
				synctest.Test(t, func(t *testing.T) {
					infer := memDelayServer(t, k, service)
					req := &client.InferRequest{Model: "delay", Inputs: []client.Input{
						input("INPUT0", tensor.FP32, []int64{1, int64(floats)}, make([]byte, 4*floats))}}
					for i := range 2 {
						start := time.Now()
						resp, err := infer(context.Background(), req)
						total := time.Since(start)
						if err != nil {
							t.Fatalf("call %d: %v", i, err)
						}
						if out, ok := resp.Output("OUTPUT0"); !ok || len(out.Raw) != 4*floats {
							t.Fatalf("call %d: outputs %d", i, len(resp.Outputs))
						}
						tm := resp.Timing
						if tm.Wait < service || tm.SendRecv < 0 || tm.SendRecv+tm.Wait != total {
							t.Fatalf("call %d: send/recv %v + wait %v of %v in all; want a wait of at least the service time %v, and the parts adding up",
								i, tm.SendRecv, tm.Wait, total, service)
						}
					}
				})
			})
		}
	}
}

// memDelayServer starts the reference server with the delay model on an
// in-memory network inside the bubble, and returns k's infer to it.
func memDelayServer(t *testing.T, k transportKind, service time.Duration) inferFunc {
	var mem memnet.Network
	s, err := refserver.New(refserver.Options{HTTPAddr: "http:1", GRPCAddr: "grpc:1", Models: []string{"delay"},
		ModelParams: map[string]map[string]string{"delay": {"delay": service.String()}},
		Listen:      mem.Listen, PlainTimers: true, ShutdownGrace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	_, infer := connect(t, s, k, func(o *client.Options) { o.Dial = mem.Dial; o.Timeout = time.Hour })
	return infer
}
