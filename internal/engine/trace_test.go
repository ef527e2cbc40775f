package engine

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/kinds"
)

// recordingPoint answers each request after reply, recording which step
// it carried and when it was sent.
type recordingPoint struct {
	d     *inputdata.Data
	reply time.Duration
	mu    sync.Mutex
	sent  map[int]time.Duration // step index → send offset
}

func (p *recordingPoint) Data() *inputdata.Data { return p.d }
func (p *recordingPoint) NewCaller(context.Context, int) (kinds.Caller, error) {
	return recordingCaller{p}, nil
}
func (p *recordingPoint) Stats(context.Context) (kinds.Counters, error) {
	return kinds.Counters{}, kinds.ErrNoStats
}
func (p *recordingPoint) Close() error { return nil }

type recordingCaller struct{ p *recordingPoint }

func (c recordingCaller) Call(_ context.Context, clock func() time.Duration, r *kinds.Request, out *kinds.Outcome) {
	out.Sent = clock()
	c.p.mu.Lock()
	c.p.sent[r.Step.Index] = out.Sent
	c.p.mu.Unlock()
	time.Sleep(c.p.reply)
	out.Done = clock()
}
func (recordingCaller) Close() error { return nil }

// A trace is replayed open loop: request n carries step n of the data
// (its own prompt) and leaves at its own time, even when every reply takes
// longer than the gaps between sends, so a slow server never delays the
// schedule (no coordinated omission). On the fake clock every send is on
// time to the nanosecond, and the schedule error is recorded for each.
func TestTraceReplayOnSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gaps := []time.Duration{10 * ms, 0, 35 * ms, 5 * ms, 20 * ms, 0}
		steps := make([]inputdata.Step, len(gaps))
		d := &inputdata.Data{Streams: [][]inputdata.Step{steps}, BatchSize: 1}
		offs, _ := flatOffsets(d)
		rp := &recordingPoint{d: d, reply: 100 * ms, sent: map[int]time.Duration{}}
		pl := &pointLoad{kind: rp, data: d, offsets: offs, seqIDs: new(atomic.Uint64), validateEvery: 1, byTick: true}
		pacer := NewIntervalsPacer(gaps)
		w, _, err := startSession(context.Background(), pl,
			loadSpec{rate: true, workers: 1, pacer: pacer, budget: int64(len(gaps)), whole: true}, time.Now()).wait()
		if err != nil || w == nil || w.n != int64(len(gaps)) {
			t.Fatalf("window %+v, err %v", w, err)
		}
		for n := range gaps {
			if got, want := rp.sent[n], pacer.Due(uint64(n)); got != want {
				t.Errorf("step %d sent at %v, want %v", n, got, want)
			}
		}
		m := w.metrics(1, w.end-w.start)
		if se := m.ScheduleError; se == nil || se.Count != int64(len(gaps)) || se.MaxUs != 0 {
			t.Errorf("schedule error %+v, want %d sends on time", se, len(gaps))
		}
	})
}

// A closed-loop load has no schedule to keep: no schedule error.
func TestClosedLoopHasNoScheduleError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := simpleData(1, 2)
		offs, _ := flatOffsets(d)
		rp := &recordingPoint{d: d, reply: ms, sent: map[int]time.Duration{}}
		pl := &pointLoad{kind: rp, data: d, offsets: offs, seqIDs: new(atomic.Uint64), validateEvery: 1}
		w, _, err := startSession(context.Background(), pl, loadSpec{workers: 2, budget: 10, whole: true}, time.Now()).wait()
		if err != nil {
			t.Fatal(err)
		}
		if m := w.metrics(1, time.Second); m.ScheduleError != nil {
			t.Errorf("closed loop recorded a schedule error: %+v", m.ScheduleError)
		}
	})
}

// BenchmarkTraceScheduleError replays a 200-request trace at 200
// requests/s (one op is one replay) against a server that answers at once,
// with the precise wait a trace's sends use, and reports how late the
// sends left against their timestamps: the median and 99th percentile in
// microseconds. On an idle machine both stay well under a millisecond;
// a plain timer (precise off) is late by about a millisecond at each send.
func BenchmarkTraceScheduleError(b *testing.B) {
	const n = 200
	gaps := make([]time.Duration, n)
	for i := range gaps {
		gaps[i] = 5 * time.Millisecond
	}
	d := &inputdata.Data{Streams: [][]inputdata.Step{make([]inputdata.Step, n)}, BatchSize: 1}
	offs, _ := flatOffsets(d)
	for _, precise := range []bool{true, false} {
		name := "precise"
		if !precise {
			name = "plain-timer"
		}
		b.Run(name, func(b *testing.B) {
			all := newDurHist()
			for range b.N {
				pl := &pointLoad{kind: instantPoint{d}, data: d, offsets: offs, seqIDs: new(atomic.Uint64), validateEvery: 1, byTick: true}
				w, _, err := startSession(context.Background(), pl, loadSpec{rate: true, workers: 4, pacer: NewIntervalsPacer(gaps),
					budget: n, whole: true, precise: precise}, time.Now()).wait()
				if err != nil || w == nil || w.sendErr == nil {
					b.Fatalf("replay: %v", err)
				}
				all.merge(w.sendErr)
			}
			dist := all.dist()
			b.ReportMetric(dist.P50Us, "p50-µs")
			b.ReportMetric(dist.P99Us, "p99-µs")
			b.ReportMetric(dist.MaxUs, "max-µs")
		})
	}
}

// A precise send's tick goes to a worker coarseMargin ahead where the
// pool grows, so that a late dispatcher is absorbed; a fixed pool
// (max_threads) cannot spare a worker that long per tick.
func TestHandoffMargin(t *testing.T) {
	if got := (loadSpec{rate: true, workers: 4, precise: true}).handoff(); got != coarseMargin {
		t.Errorf("growing pool: hand-off %v ahead, want %v", got, coarseMargin)
	}
	if got := (loadSpec{rate: true, workers: 2, maxWorkers: 2, precise: true}).handoff(); got != boundedMargin || got >= coarseMargin {
		t.Errorf("fixed pool of 2: hand-off %v ahead, want %v", got, boundedMargin)
	}
}
