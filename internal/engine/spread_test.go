package engine

import (
	"strings"
	"testing"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// The note on an unstable point names what broke the rule: latency
// that went from 15 s to 79 s per window is not "throughput".
func TestNoteSpreadNamesWhatFailed(t *testing.T) {
	for _, tt := range []struct {
		name      string
		tp, lat   []float64
		want, not string
	}{
		{"latency", []float64{10, 11, 10.5}, []float64{15e6, 40e6, 79e6}, "latency spans max/min 5.27", "throughput"},
		{"throughput", []float64{10, 20, 15}, []float64{1000, 1010, 1005}, "throughput spans max/min 2.00", "latency"},
		{"both", []float64{10, 20, 15}, []float64{1000, 3000, 1005}, "throughput spans max/min 2.00 and latency spans max/min 3.00", "\x00"},
	} {
		pr := &pointRunner{m: plan.Measurement{StabilityPct: 25}}
		for i := range tt.tp {
			pr.windows = append(pr.windows, &measured{win: result.Window{Throughput: tt.tp[i], LatencyUs: tt.lat[i]}})
		}
		pr.noteSpread(0)
		if len(pr.notes) != 1 || !strings.Contains(pr.notes[0], tt.want) || strings.Contains(pr.notes[0], tt.not) {
			t.Errorf("%s: notes %q, want %q without %q", tt.name, pr.notes, tt.want, tt.not)
		}
	}
}
