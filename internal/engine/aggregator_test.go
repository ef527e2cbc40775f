package engine

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/transport"
)

func TestAggregatorWholeWindow(t *testing.T) {
	in := make(chan []sample, 16)
	a := &aggregator{in: in, out: make(chan *acc, 1), stopping: make(chan struct{}), done: make(chan struct{}),
		clock: func() time.Duration { return 0 }, c: newCutter(cutter{}), whole: true}
	go a.run()
	in <- []sample{{sched: 30 * ms, Outcome: kinds.Outcome{Sent: 30 * ms, Done: 40 * ms}}}
	in <- []sample{{sched: 10 * ms, Outcome: kinds.Outcome{Sent: 12 * ms, Done: 20 * ms, Checked: true}}}
	in <- []sample{{sched: 50 * ms, Outcome: kinds.Outcome{Sent: 50 * ms, Done: 90 * ms, Err: &transport.TransportError{Op: "infer", Err: errors.New("refused")}}}}
	in <- []sample{{sched: 50 * ms, Outcome: kinds.Outcome{Sent: 55 * ms, Done: 60 * ms, Checked: true, Mismatch: "OUTPUT0[3]: expected 1, got 2"}}}
	close(in)
	w := <-a.out
	<-a.done
	if w.start != 10*ms || w.end != 90*ms || w.n != 3 || w.errs != 1 || w.unreachable != 1 {
		t.Errorf("window = start %v end %v n %d errs %d unreachable %d", w.start, w.end, w.n, w.errs, w.unreachable)
	}
	if a.stats.checked != 2 || a.stats.mismatches.total != 1 || a.stats.errors.total != 1 || a.stats.late != 2 {
		t.Errorf("stats = %+v", a.stats)
	}
}

func TestAggregatorTimeWindowsAndStop(t *testing.T) {
	// Fake time: a loaded machine must not move a sample past a boundary.
	synctest.Test(t, func(t *testing.T) {
		in := make(chan []sample, 64)
		stopping := make(chan struct{})
		epoch := time.Now()
		clock := func() time.Duration { return time.Since(epoch) }
		a := &aggregator{in: in, out: make(chan *acc), stopping: stopping, done: make(chan struct{}),
			clock: clock, grace: time.Millisecond, c: newCutter(cutter{window: 20 * ms})}
		go a.run()
		for i := 0; i < 3; i++ {
			now := clock()
			in <- []sample{{sched: now - ms, Outcome: kinds.Outcome{Sent: now - ms, Done: now}}}
			w := <-a.out
			if w.n != 1 || w.end-w.start != 20*ms {
				t.Errorf("window %d: n %d over %v", i, w.n, w.end-w.start)
			}
		}
		// Stopped with nobody reading windows: the aggregator must keep
		// draining so workers never block, then exit once they are done.
		close(stopping)
		for i := 0; i < 50; i++ {
			in <- []sample{{Outcome: kinds.Outcome{Done: clock()}}}
		}
		close(in)
		<-a.done
	})
}

func TestTally(t *testing.T) {
	var a, b tally
	for i := 0; i < 8; i++ {
		a.add(fmt.Sprint("e", i%6))
	}
	if a.total != 8 || len(a.order) != maxDistinct {
		t.Fatalf("a = %+v", a)
	}
	b.add("e0")
	b.add("new")
	a.merge(&b)
	want := []string{"e0 (×3)", "e1 (×2)", "e2", "e3", "e4"}
	if got := a.first(); !slices.Equal(got, want) || a.total != 10 {
		t.Errorf("first = %v total %d, want %v", got, a.total, want)
	}
}
