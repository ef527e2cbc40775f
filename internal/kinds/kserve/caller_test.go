package kserve

import (
	"context"
	"errors"
	"testing"
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
