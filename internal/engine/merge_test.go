package engine

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/perfscen/perfscen/internal/transport"
)

// agentWindows spreads samples over agents round robin and returns each
// agent's window (as its aggregator would hold it) and the one window of
// all of them, as one process would hold it.
func agentWindows(agents int, samples []sample, start, end time.Duration) ([]*acc, *acc) {
	all := newAcc(start)
	parts := make([]*acc, agents)
	for i := range parts {
		parts[i] = newAcc(start)
	}
	for i := range samples {
		s := &samples[i]
		parts[i%agents].add(s)
		all.add(s)
		if errors.Is(s.Err, transport.ErrUnavailable) {
			parts[i%agents].unreachable++
			all.unreachable++
		}
	}
	for _, a := range append(parts, all) {
		a.end = end
	}
	return parts, all
}

func randomSamples(n int, seed uint64) []sample {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([]sample, n)
	for i := range out {
		lat := time.Duration(200+rng.ExpFloat64()*3000) * time.Microsecond
		out[i].sched = time.Duration(i) * time.Millisecond
		out[i].Sent = out[i].sched
		out[i].Done = out[i].sched + lat
		out[i].SendRecv = lat / 10
		out[i].Wait = lat - lat/10
		if i%97 == 0 {
			out[i].Err = fmt.Errorf("refused: %w", transport.ErrUnavailable)
		}
		// Sequences end and requests wait for a worker too: the merged
		// window must carry both (it lost them before, and with them the
		// sequence rate and the "delayed requests" warning).
		out[i].seqEnd = i%5 == 0
		out[i].queued = i%7 == 0
	}
	return out
}

// The agents' reports of a window, merged, are the window one process
// holding every request would have measured: counts, sums, extremes and
// every percentile (HDR histograms merge exactly, bucket for bucket).
func TestMergedWindowIsTheWholeWindow(t *testing.T) {
	for _, agents := range []int{1, 2, 3, 7} {
		t.Run(fmt.Sprint(agents), func(t *testing.T) {
			parts, all := agentWindows(agents, randomSamples(5000, uint64(agents)), time.Second, 2*time.Second)
			var reps []WindowReport
			for _, p := range parts {
				r, err := reportOf(p, 4)
				if err != nil {
					t.Fatal(err)
				}
				reps = append(reps, r)
			}
			merged, err := MergeWindows(reps, false)
			if err != nil {
				t.Fatal(err)
			}
			got, want := merged.metrics(1, time.Second), all.metrics(1, time.Second)
			// Sums of floats in another order differ in the last bits.
			if d := got.LatencyAvgUs - want.LatencyAvgUs; d > 1e-6 || d < -1e-6 {
				t.Errorf("average %v, want %v", got.LatencyAvgUs, want.LatencyAvgUs)
			}
			if d := got.LatencyStdUs/want.LatencyStdUs - 1; d > 1e-9 || d < -1e-9 {
				t.Errorf("standard deviation %v, want %v", got.LatencyStdUs, want.LatencyStdUs)
			}
			if g, w := fmt.Sprint(merged.classes.list()), fmt.Sprint(all.classes.list()); g != w || len(all.classes.list()) == 0 {
				t.Errorf("failure classes %s, want %s", g, w)
			}
			got.LatencyAvgUs, got.LatencyStdUs = want.LatencyAvgUs, want.LatencyStdUs
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("merged (-want +got)\n%s", d)
			}
			if merged.start != time.Second || merged.end != 2*time.Second || merged.unreachable != all.unreachable {
				t.Errorf("bounds [%v, %v], unreachable %d", merged.start, merged.end, merged.unreachable)
			}
		})
	}
}

// Reports of different windows are not one window; a whole-session window
// spans every agent's requests; an agent that had none gives no bounds.
func TestMergeWindowBounds(t *testing.T) {
	a, b := newAcc(time.Second), newAcc(2*time.Second)
	a.end, b.end = 2*time.Second, 3*time.Second
	ra, _ := reportOf(a, 0)
	rb, _ := reportOf(b, 1)
	if _, err := MergeWindows([]WindowReport{ra, rb}, false); err == nil {
		t.Error("windows 0 and 1 merged as one")
	}
	parts, _ := agentWindows(2, randomSamples(10, 1), 0, 0)
	parts[0].start, parts[0].end = 5*time.Millisecond, 40*time.Millisecond
	parts[1].start, parts[1].end = 2*time.Millisecond, 30*time.Millisecond
	empty := newAcc(0)
	var reps []WindowReport
	for _, p := range append(parts, empty) {
		r, _ := reportOf(p, 0)
		reps = append(reps, r)
	}
	m, err := MergeWindows(reps, true)
	if err != nil {
		t.Fatal(err)
	}
	if m.start != 2*time.Millisecond || m.end != 40*time.Millisecond || m.n+m.errs != 10 {
		t.Errorf("whole window [%v, %v] with %d requests", m.start, m.end, m.n+m.errs)
	}
}

// A report whose histogram does not hold its count is refused, not
// merged into a figure nobody measured.
func TestMergeRefusesInconsistentReports(t *testing.T) {
	parts, _ := agentWindows(1, randomSamples(100, 1), 0, time.Second)
	r, _ := reportOf(parts[0], 0)
	r.Requests++
	if _, err := MergeWindows([]WindowReport{r}, false); err == nil {
		t.Error("inconsistent report merged")
	}
	r.Requests--
	r.Histogram = r.Histogram[:len(r.Histogram)/2]
	if _, err := MergeWindows([]WindowReport{r}, false); err == nil {
		t.Error("truncated histogram merged")
	}
}

// Agents' totals merge with each message naming its agent.
func TestMergeTotals(t *testing.T) {
	st := mergeTotals([]string{"agent 0 (a)", "agent 1 (b)"}, []Totals{
		{Errors: []Tally{{"timeout", 3}}, ErrorsTotal: 3, Checked: 10, Late: 1},
		{Errors: []Tally{{"timeout", 2}, {"refused", 1}}, ErrorsTotal: 9, Mismatches: []Tally{{"OUTPUT0 differs", 1}}, MismatchesTotal: 1, Checked: 5},
	})
	if st.errors.total != 12 || st.checked != 15 || st.late != 1 || st.mismatches.total != 1 {
		t.Fatalf("%+v", st)
	}
	want := []string{"agent 0 (a): timeout (×3)", "agent 1 (b): timeout (×2)", "agent 1 (b): refused"}
	if got := st.errors.first(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("errors %v, want %v", got, want)
	}
}
