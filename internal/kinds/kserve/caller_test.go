package kserve

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/kinds/kserve/client"
	"github.com/perfscen/perfscen/internal/tensor"
	"github.com/perfscen/perfscen/internal/transport"
)

// fakeStreamer opens streams whose sends fail, and remembers each
// stream's context.
type fakeStreamer struct{ opened []context.Context }

func (f *fakeStreamer) InferStream(ctx context.Context) (client.Stream, error) {
	f.opened = append(f.opened, ctx)
	return failingStream{}, nil
}

type failingStream struct{}

func (failingStream) Send(*client.InferRequest) error {
	return &transport.TransportError{Protocol: "grpc", Op: "stream send", Err: errors.New("EOF")}
}
func (failingStream) Recv() (*client.InferResponse, error) { return nil, errors.New("not reached") }
func (failingStream) CloseSend() error                     { return nil }

// A stream whose send failed is ended, not left open until the session
// ends: each later call opens a stream of its own, and an abandoned one
// would hold a server-side call per failure.
func TestFailedStreamSendEndsTheStream(t *testing.T) {
	f := &fakeStreamer{}
	step := inputdata.Step{Inputs: []tensor.Tensor{{Name: "INPUT0", DataType: tensor.INT32, Shape: []int64{1}, Raw: make([]byte, 4)}}}
	p := &point{streamer: f, steps: 1}
	p.model.Name = "m"
	c, err := p.NewCaller(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	clock := func() time.Duration { return 0 }
	for i := range 2 {
		var out kinds.Outcome
		c.Call(context.Background(), clock, &kinds.Request{Step: inputdata.Request{Step: &step}}, &out)
		if !errors.Is(out.Err, transport.ErrUnavailable) {
			t.Fatalf("call %d: %v, want the send's transport error", i, out.Err)
		}
		if len(f.opened) != i+1 {
			t.Fatalf("call %d: %d streams opened", i, len(f.opened))
		}
		if f.opened[i].Err() == nil {
			t.Fatalf("call %d: the stream whose send failed is still open", i)
		}
	}
	c.Close()
}

// silentStreamer opens streams that take every request and never send a
// final response (a decoupled model that hangs); Recv returns once the
// stream's context ends.
type silentStreamer struct{ opened []context.Context }

func (f *silentStreamer) InferStream(ctx context.Context) (client.Stream, error) {
	f.opened = append(f.opened, ctx)
	return silentStream{ctx}, nil
}

type silentStream struct{ ctx context.Context }

func (silentStream) Send(*client.InferRequest) error { return nil }
func (s silentStream) Recv() (*client.InferResponse, error) {
	<-s.ctx.Done()
	return nil, &transport.TransportError{Protocol: "grpc", Op: "stream recv", Err: s.ctx.Err()}
}
func (silentStream) CloseSend() error { return nil }

// server.timeout bounds a streamed request up to its final response, as
// it bounds a unary call: the call fails as a timeout after it, the
// stream is ended, and the next call opens another (before, Recv waited
// for the drain and the point ended "unstable").
func TestStreamedCallTimesOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &silentStreamer{}
		step := inputdata.Step{Inputs: []tensor.Tensor{{Name: "INPUT0", DataType: tensor.INT32, Shape: []int64{1}, Raw: make([]byte, 4)}}}
		p := &point{streamer: f, steps: 1, timeout: 2 * time.Second}
		p.model.Name = "m"
		c, err := p.NewCaller(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		for i := range 2 {
			start := time.Now()
			var out kinds.Outcome
			c.Call(context.Background(), func() time.Duration { return time.Since(start) }, &kinds.Request{Step: inputdata.Request{Step: &step}}, &out)
			if !errors.Is(out.Err, context.DeadlineExceeded) || !strings.Contains(out.Err.Error(), "no final response within server.timeout 2s") {
				t.Fatalf("call %d: %v, want a timeout", i, out.Err)
			}
			if took := time.Since(start); took != 2*time.Second {
				t.Errorf("call %d gave up after %s, want the 2s of server.timeout", i, took)
			}
			if len(f.opened) != i+1 || f.opened[i].Err() == nil {
				t.Fatalf("call %d: %d stream(s) opened, the last still open: %v", i, len(f.opened), f.opened[i].Err())
			}
		}
	})
}
