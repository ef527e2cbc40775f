package engine

import (
	"context"
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/procacct"
	"github.com/perfscen/perfscen/runner/result"
)

type fakeSource struct{ beside bool }

func (f *fakeSource) Read(context.Context, string) (procacct.Reading, error) {
	return procacct.Reading{}, nil
}
func (f *fakeSource) PerModel() bool   { return false }
func (f *fakeSource) Beside() bool     { return f.beside }
func (f *fakeSource) Describe() string { return "fake" }
func (f *fakeSource) Notes() []string  { return nil }
func (f *fakeSource) Close() error     { return nil }

// A CPU-bound server beside the run is the thing measured, not a
// neighbour: its CPU leaves "other processes"; a remote one, whose CPU
// never entered them, changes nothing.
func TestBesideServersLeaveOtherCPU(t *testing.T) {
	n := float64(runtime.NumCPU())
	for _, tt := range []struct {
		name        string
		beside      bool
		other, want float64
	}{
		{"server beside the run", true, 0.6, 0.6 - 0.5/n},
		{"remote server", false, 0.6, 0.6},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := &fakeSource{beside: tt.beside}
			u := &unit{prs: []*pointRunner{{ss: &serverState{proc: src}}}}
			// 500 ms of CPU over a 1 s window: half of one core.
			m := &measured{proc: &result.ProcessStats{CPUUs: 500, Inferences: 1000}, win: result.Window{Duration: time.Second}}
			d := &result.Disturbance{OtherCPU: tt.other}
			u.besideServers(d, []*measured{m})
			if math.Abs(d.OtherCPU-tt.want) > 1e-9 {
				t.Errorf("other CPU %g, want %g", d.OtherCPU, tt.want)
			}
			if tt.beside != (d.ServerCPU != nil) {
				t.Errorf("server CPU %v", d.ServerCPU)
			}
		})
	}
}
