package refserver

import (
	"context"
	"encoding/binary"
	"math"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfscen/perfscen/internal/tensor"
)

// Two models naming one device run one execution at a time, whichever
// model it is: a delay execution and a simple one sent together finish 10
// and 20 ms after they are sent, in either order. On separate devices
// both finish after 10 ms.
func TestModelsShareADevice(t *testing.T) {
	for _, tc := range []struct {
		name    string
		devices [2]string
		want    time.Duration // when the later of the two finishes
	}{
		{name: "one device", devices: [2]string{"gpu0", "gpu0"}, want: 20 * time.Millisecond},
		{name: "two devices", devices: [2]string{"gpu0", "gpu1"}, want: 10 * time.Millisecond},
		{name: "no device", want: 10 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s, err := New(Options{HTTPAddr: "-", GRPCAddr: "-", PlainTimers: true, Models: []string{"simple", "delay"},
					ModelParams: map[string]map[string]string{
						"simple": {"added_latency": "10ms", "device": tc.devices[0]},
						"delay":  {"delay": "10ms", "device": tc.devices[1]},
					}})
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				reqs := []*Request{
					{Model: "simple", Inputs: []tensor.Tensor{int32s("INPUT0"), int32s("INPUT1")}},
					{Model: "delay", Inputs: []tensor.Tensor{fp32s("INPUT0")}},
				}
				start := time.Now()
				var wg sync.WaitGroup
				var last time.Duration
				var mu sync.Mutex
				for _, r := range reqs {
					wg.Go(func() {
						if _, err := s.Infer(context.Background(), r); err != nil {
							t.Error(err)
						}
						mu.Lock()
						last = max(last, time.Since(start))
						mu.Unlock()
					})
				}
				wg.Wait()
				if last != tc.want {
					t.Errorf("both done after %v, want %v", last, tc.want)
				}
			})
		})
	}
}

func int32s(name string) tensor.Tensor {
	return tensor.Tensor{Name: name, DataType: tensor.INT32, Shape: []int64{1, 16}, Raw: make([]byte, 64)}
}

func fp32s(name string) tensor.Tensor {
	raw := make([]byte, 16*4)
	for i := 0; i < 16; i++ {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(float32(i)))
	}
	return tensor.Tensor{Name: name, DataType: tensor.FP32, Shape: []int64{1, 16}, Raw: raw}
}
