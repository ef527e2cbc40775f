package engine

import (
	"fmt"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perfscen/perfscen/runner/result"
)

// WindowReport is one closed window of one agent's session in mergeable
// form: counters, exact sums and the HDR latency histogram. Percentiles
// are never averaged and requests never travel one by one: the coordinator
// merges the agents' reports of a window into one window, which is then
// exactly the window one process holding every agent's requests would
// have measured (histogram buckets at 3 significant figures, as every
// window's).
type WindowReport struct {
	Index       int
	Start, End  time.Duration // on the session clock, shared by every agent
	Requests    int64
	Errors      int64
	Unreachable int64
	SumUs       float64
	// MeanUs and M2 are Welford's running mean and sum of squared
	// deviations of the latencies, merged by the pairwise update.
	MeanUs     float64
	M2         float64
	MinLatency time.Duration // -1 without a successful request
	MaxLatency time.Duration
	SendRecv   time.Duration
	Wait       time.Duration
	Decoupled  bool
	Responses  int64
	FirstN     int64
	FirstSumUs float64
	// Histogram is the V2 compressed encoding (binary, microseconds).
	Histogram []byte
	// Classes are the window's failures by class.
	Classes []result.ErrorClass
	// Sequences and Delayed are the successful requests that ended a
	// sequence and that waited for a free worker: the sequence rate and
	// the "delayed requests" warning of one process, summed over agents.
	Sequences, Delayed int64
}

// reportOf is a closed window's report.
func reportOf(a *acc, index int) (WindowReport, error) {
	h, err := a.hist.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return WindowReport{}, fmt.Errorf("encoding latency histogram: %w", err)
	}
	return WindowReport{Index: index, Start: a.start, End: a.end, Requests: a.n, Errors: a.errs, Unreachable: a.unreachable,
		SumUs: a.sumUs, MeanUs: a.meanUs, M2: a.m2, MinLatency: a.minLat, MaxLatency: a.maxLat, SendRecv: a.sendRecv, Wait: a.wait,
		Decoupled: a.decoupled, Responses: a.responses, FirstN: a.firstN, FirstSumUs: a.firstSumUs, Histogram: h,
		Classes: a.classes.list(), Sequences: a.sequences, Delayed: a.delayed}, nil
}

// acc turns a report back into the window it describes, but for its
// latency histogram, which it returns decoded into a sparse histogram:
// MergeWindows adds those counts straight into the merged window's one.
// A whole decoded histogram is about 235 KB whatever it holds, so decoding
// each agent's allocated 118 MB per window at 500 agents; the sparse one
// is the size of the agent's few hundred buckets.
func (r *WindowReport) acc() (*acc, *hdrhistogram.PackedHistogram, error) {
	h, err := hdrhistogram.DecodePacked(r.Histogram)
	if err != nil {
		return nil, nil, fmt.Errorf("window %d: latency histogram: %w", r.Index, err)
	}
	if h.TotalCount() != r.Requests {
		return nil, nil, fmt.Errorf("window %d: histogram holds %d requests, the counters %d", r.Index, h.TotalCount(), r.Requests)
	}
	a := &acc{start: r.Start, end: r.End, n: r.Requests, errs: r.Errors, unreachable: r.Unreachable,
		sumUs: r.SumUs, meanUs: r.MeanUs, m2: r.M2, minLat: r.MinLatency, maxLat: r.MaxLatency, sendRecv: r.SendRecv, wait: r.Wait,
		decoupled: r.Decoupled, responses: r.Responses, firstN: r.FirstN, firstSumUs: r.FirstSumUs,
		sequences: r.Sequences, delayed: r.Delayed}
	for _, c := range r.Classes {
		a.classes.addN(c.Class, c.Count, c.Example)
	}
	return a, h, nil
}

// MergeWindows merges every agent's report of one window into the window.
// Time windows were cut on the same boundaries by every agent; a report
// whose bounds differ is refused. A whole-session window (whole) spans
// from the earliest agent's first send to the latest's last completion.
func MergeWindows(reps []WindowReport, whole bool) (*acc, error) {
	if len(reps) == 0 {
		return nil, fmt.Errorf("no agent reported the window")
	}
	out := newAcc(0)
	seen := false
	for i := range reps {
		r := &reps[i]
		a, h, err := r.acc()
		if err != nil {
			return nil, err
		}
		switch {
		case !whole && i > 0 && (r.Start != reps[0].Start || r.End != reps[0].End || r.Index != reps[0].Index):
			return nil, fmt.Errorf("window %d spans [%s, %s] on one agent, window %d [%s, %s] on another: not one window",
				r.Index, r.Start, r.End, reps[0].Index, reps[0].Start, reps[0].End)
		case whole && a.n+a.errs == 0:
			continue // an agent with no request has no bounds to give
		}
		start, end := a.start, a.end
		if !seen {
			out.start, out.end = start, end
		}
		seen = true
		if dropped := h.MergeInto(out.hist); dropped > 0 {
			return nil, fmt.Errorf("window %d: %d latencies outside the histogram's range", r.Index, dropped)
		}
		out.merge(a)
		out.start, out.end = min(out.start, start), max(out.end, end)
	}
	if !whole {
		out.start, out.end = reps[0].Start, reps[0].End
	}
	return out, nil
}

// Tally is one message and how often it was seen.
type Tally struct {
	Message string
	Count   int64
}

// Totals are what a session learned beyond its windows, on one agent.
type Totals struct {
	Errors, Mismatches           []Tally // the first distinct ones, in order
	ErrorsTotal, MismatchesTotal int64
	// Classes are every failure by class.
	Classes                []result.ErrorClass
	Checked, Late, Dropped int64
	// Err is a failure to start the session's workers.
	Err string
}

func totalsOf(st *aggStats, err error) Totals {
	t := Totals{ErrorsTotal: st.errors.total, MismatchesTotal: st.mismatches.total,
		Checked: st.checked, Late: st.late, Dropped: st.dropped, Classes: st.classes.list()}
	for _, m := range st.errors.order {
		t.Errors = append(t.Errors, Tally{m, st.errors.counts[m]})
	}
	for _, m := range st.mismatches.order {
		t.Mismatches = append(t.Mismatches, Tally{m, st.mismatches.counts[m]})
	}
	if err != nil {
		t.Err = err.Error()
	}
	return t
}

// mergeTotals folds every agent's totals into one session's, each message
// naming the agent it came from.
func mergeTotals(names []string, all []Totals) *aggStats {
	st := &aggStats{}
	for i, t := range all {
		var errs, mism tally
		for _, e := range t.Errors {
			errs.addN(names[i]+": "+e.Message, e.Count)
		}
		for _, m := range t.Mismatches {
			mism.addN(names[i]+": "+m.Message, m.Count)
		}
		for _, c := range t.Classes {
			example := c.Example
			if example != "" {
				example = names[i] + ": " + example
			}
			st.classes.addN(c.Class, c.Count, example)
		}
		// Messages past the first few distinct ones are counted, not kept.
		errs.total, mism.total = t.ErrorsTotal, t.MismatchesTotal
		st.errors.merge(&errs)
		st.mismatches.merge(&mism)
		st.checked += t.Checked
		st.late += t.Late
		st.dropped += t.Dropped
	}
	return st
}

// addN counts msg n times.
func (t *tally) addN(msg string, n int64) {
	t.total += n
	if t.counts == nil {
		t.counts = map[string]int64{}
	}
	if _, ok := t.counts[msg]; ok {
		t.counts[msg] += n
		return
	}
	if len(t.order) < maxDistinct {
		t.order = append(t.order, msg)
		t.counts[msg] = n
	}
}
