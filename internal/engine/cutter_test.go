package engine

import (
	"errors"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/kinds"
)

const ms = time.Millisecond

func done(at, lat time.Duration) *sample {
	return &sample{sched: at - lat, Outcome: kinds.Outcome{Sent: at - lat, Done: at}}
}

func TestCutterTimeWindows(t *testing.T) {
	c := newCutter(cutter{warmupEnd: 100 * ms, window: 200 * ms})
	c.add(done(50*ms, 10*ms))  // warm-up: dropped
	c.add(done(120*ms, 10*ms)) // window 0
	c.add(done(299*ms, 10*ms)) // window 0
	c.add(done(300*ms, 10*ms)) // window 1: arrived before the cut
	c.add(&sample{sched: 150 * ms, Outcome: kinds.Outcome{Sent: 150 * ms, Done: 250 * ms, Err: errors.New("boom")}})
	if c.due() != 300*ms {
		t.Fatalf("due = %v, want 300ms", c.due())
	}
	w0 := c.tick()
	if w0 == nil || w0.n != 2 || w0.errs != 1 || w0.start != 100*ms || w0.end != 300*ms {
		t.Fatalf("window 0 = %+v", w0)
	}
	c.add(done(290*ms, 5*ms)) // straggler of window 0: counts in window 1
	c.add(done(450*ms, 5*ms))
	w1 := c.tick()
	if w1 == nil || w1.n != 3 || w1.start != 300*ms || w1.end != 500*ms {
		t.Fatalf("window 1 = %+v", w1)
	}
	if c.dropped != 1 {
		t.Errorf("dropped = %d, want 1", c.dropped)
	}
	if c.due() != 700*ms {
		t.Errorf("next due = %v, want 700ms", c.due())
	}
}

func TestCutterCountWindowsGrowByStep(t *testing.T) {
	c := newCutter(cutter{warmupEnd: 5 * ms, count: true, minCount: 3, step: 100 * ms, maxLen: 1000 * ms})
	c.add(done(10*ms, ms))
	c.add(done(20*ms, ms))
	c.add(done(150*ms, ms)) // beyond the first boundary: held for the next
	if w := c.tick(); w != nil {
		t.Fatalf("closed with 2 of 3 requests: %+v", w)
	}
	if c.due() != 205*ms {
		t.Fatalf("due = %v, want 205ms", c.due())
	}
	w := c.tick()
	if w == nil || w.n != 3 || w.start != 5*ms || w.end != 205*ms {
		t.Fatalf("window = %+v", w)
	}
}

func TestCutterCountWindowGivesUpAtMaxLen(t *testing.T) {
	c := newCutter(cutter{count: true, minCount: 100, step: 100 * ms, maxLen: 300 * ms})
	c.add(done(10*ms, ms))
	var w *acc
	for i := 0; i < 5 && w == nil; i++ {
		w = c.tick()
	}
	if w == nil || w.end != 300*ms || w.n != 1 {
		t.Fatalf("window = %+v, want closed at 300ms with 1 request", w)
	}
}

func TestCutterCountsLateSends(t *testing.T) {
	c := newCutter(cutter{window: time.Second})
	c.add(&sample{sched: 10 * ms, Outcome: kinds.Outcome{Sent: 10*ms + 500*time.Microsecond, Done: 20 * ms}})
	c.add(&sample{sched: 10 * ms, Outcome: kinds.Outcome{Sent: 15 * ms, Done: 20 * ms}})
	if c.late != 1 {
		t.Errorf("late = %d, want 1", c.late)
	}
}
