package engine

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfscen/perfscen/internal/kinds"
)

// A window is cut with the samples still waiting in workers' unfilled
// batches: at a low request rate no batch fills before the boundary, and
// the window must not come out empty or late.
func TestAggregatorCollectsPendingBatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newMailroom()
		epoch := time.Now()
		clock := func() time.Duration { return time.Since(epoch) }
		stopping := make(chan struct{})
		a := &aggregator{in: m.out, pending: m.collect, recycle: m.recycle, out: make(chan *acc),
			stopping: stopping, done: make(chan struct{}),
			clock: clock, grace: ms, c: newCutter(cutter{window: 20 * ms})}
		go a.run()
		o1, o2 := m.open(), m.open()
		for i := range 3 {
			m.post(o1, &sample{sched: ms, Outcome: kinds.Outcome{Sent: ms, Done: time.Duration(2+i) * ms}})
		}
		m.post(o2, &sample{sched: ms, Outcome: kinds.Outcome{Sent: ms, Done: 30 * ms}}) // belongs to the second window
		w := <-a.out
		if w.n != 3 || w.start != 0 || w.end != 20*ms {
			t.Fatalf("first window: n %d over [%v, %v], want 3 over [0, 20ms]", w.n, w.start, w.end)
		}
		time.Sleep(5 * ms)
		m.post(o1, &sample{sched: 25 * ms, Outcome: kinds.Outcome{Sent: 25 * ms, Done: 26 * ms}})
		if w = <-a.out; w.n != 2 {
			t.Fatalf("second window: n %d, want 2", w.n)
		}
		close(stopping)
		m.flush(o1)
		m.flush(o2)
		close(m.out)
		<-a.done
	})
}

// Every posted sample is recorded exactly once, whether it travels in a
// full batch, is collected at a cut, or is flushed when its worker exits,
// while workers post and the aggregator collects at the same time.
func TestMailroomCountsEverySampleOnce(t *testing.T) {
	m := newMailroom()
	const workers, each = 4, 3*batchSize + 17
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := m.open()
			defer m.flush(o)
			for i := range each {
				m.post(o, &sample{Outcome: kinds.Outcome{Done: time.Duration(w*each + i + 1)}})
			}
		}()
	}
	go func() { wg.Wait(); close(m.out) }()
	seen := map[time.Duration]int{}
	record := func(s *sample) { seen[s.Done]++ }
	for {
		b, ok := <-m.out
		if !ok {
			break
		}
		for i := range b {
			record(&b[i])
		}
		m.recycle(b)
		m.collect(record)
	}
	m.collect(record)
	if len(seen) != workers*each {
		t.Fatalf("recorded %d distinct samples, want %d", len(seen), workers*each)
	}
	for d, n := range seen {
		if n != 1 {
			t.Fatalf("sample %d recorded %d times", d, n)
		}
	}
}
