package client

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfscen/perfscen/internal/memnet"
	"github.com/perfscen/perfscen/internal/transport/h2test"
)

// client_wait means one thing whichever gRPC path a scenario takes:
// from the request out to the reply's first HEADERS. A server that
// answers after 10 ms and then takes 30 ms more to send the reply's body
// gives a wait of 10 ms on perfscen's own connection and on grpc-go's
// (max_connections > 0); grpc-go's was the whole call less the codec
// before, 40 ms.
func TestClientWaitOneMeaning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mem memnet.Network
		lis, err := mem.Listen(context.Background(), "tcp", "triton:8001")
		if err != nil {
			t.Fatal(err)
		}
		msg := simpleReplyMsg(t)
		h2test.Serve(t, lis, func(r *h2test.Reply) {
			time.Sleep(10 * time.Millisecond) // the server's time
			r.Headers(false, h2test.OKHeaders)
			time.Sleep(30 * time.Millisecond) // the body follows later
			r.Data(false, msg)
			r.Headers(true, h2test.OKTrailer)
		})
		for _, tc := range []struct {
			path     string
			maxConns int
		}{{"own connection", 0}, {"grpc-go", 1}} {
			cl := newClient(t, Options{Protocol: "grpc", URL: "triton:8001", Dial: mem.Dial, MaxConnections: tc.maxConns})
			var resp *InferResponse
			if conn := cl.(ConnClient).NewConn(); conn != nil {
				resp, err = conn.Infer(context.Background(), simpleRequest(""), time.Minute)
				conn.Close()
			} else {
				resp, err = cl.Infer(context.Background(), simpleRequest(""))
			}
			if err != nil {
				t.Fatalf("%s: %v", tc.path, err)
			}
			if resp.Timing.Wait != 10*time.Millisecond {
				t.Errorf("%s: wait %s, want 10ms (request out to the reply's headers)", tc.path, resp.Timing.Wait)
			}
		}
	})
}
