package refserver

import (
	"context"
	"sync"
	"time"
)

// job is one inference request inside the scheduler.
type job struct {
	ctx       context.Context
	inputs    []tensorBuf // config order
	batchSize int         // first dim when the model batches, else 1
	key       string      // jobs merge only with equal keys (same non-batch shapes)
	seq       sequenceParams
	timeout   time.Duration // reject when queued longer (schedule policy)
	queued    func()        // see inferRequest.queued; nil when nobody waits
	// emit receives a decoupled model's responses; the engine closes it
	// after the last one.
	emit chan decoupledPart

	enqueued, dequeued time.Time
	// Durations of the execution this job was part of; Triton attributes a
	// batch's compute time to every request in it.
	computeInput, computeInfer, computeOutput time.Duration

	outputs []tensorBuf
	err     error
	done    chan struct{}
}

// batchPolicy is the scheduling part of a model's config.
type batchPolicy struct {
	instances int
	dynamic   bool
	maxBatch  int // sum of batch sizes one execution may take
	delay     time.Duration
	preferred []int
}

// scheduler queues jobs for one model and runs them on instance workers,
// merging compatible jobs when dynamic batching is on.
type scheduler struct {
	policy batchPolicy
	exec   func(batch []*job)
	after  afterFunc
	// join, when set, is called by each instance worker as it starts: it
	// puts the worker on an OS thread of its own whose time is the
	// model's (procacct.Threads.Join), and returns what to call as it
	// ends.
	join func() (leave func())

	mu     sync.Mutex
	queue  []*job
	wake   chan struct{} // closed and replaced whenever queue or closed changes
	closed bool
	wg     sync.WaitGroup
	// accepted counts every job submit took, so tests can wait for
	// requests to reach the model instead of sleeping.
	accepted int
}

func newScheduler(p batchPolicy, exec func([]*job), after afterFunc, join func() func()) *scheduler {
	s := &scheduler{policy: p, exec: exec, after: after, join: join, wake: make(chan struct{})}
	for range p.instances {
		s.wg.Add(1)
		go s.worker()
	}
	return s
}

// submit queues j; it reports false when the scheduler is closed.
func (s *scheduler) submit(j *job) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	j.enqueued = time.Now()
	s.queue = append(s.queue, j)
	s.accepted++
	s.signalLocked()
	return true
}

func (s *scheduler) signalLocked() {
	close(s.wake)
	s.wake = make(chan struct{})
}

// close stops intake and waits until every queued job has run.
func (s *scheduler) close() {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		s.signalLocked()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// pending is the number of queued jobs not yet taken by an instance.
func (s *scheduler) pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

func (s *scheduler) worker() {
	defer s.wg.Done()
	if s.join != nil {
		defer s.join()()
	}
	for {
		batch := s.next()
		if batch == nil {
			return
		}
		s.exec(batch)
	}
}

// next blocks until a batch is ready, or returns nil once closed and empty.
func (s *scheduler) next() []*job {
	s.mu.Lock()
	for {
		for len(s.queue) == 0 {
			if s.closed {
				s.mu.Unlock()
				return nil
			}
			w := s.wake
			s.mu.Unlock()
			<-w
			s.mu.Lock()
		}
		if !s.policy.dynamic {
			j := s.queue[0]
			s.queue = s.queue[1:]
			s.mu.Unlock()
			return []*job{j}
		}
		idx, size := s.compatibleLocked()
		now := time.Now()
		deadline := s.queue[0].enqueued.Add(s.policy.delay)
		take := s.decideLocked(idx, size, !now.Before(deadline) || s.closed)
		if take > 0 {
			batch := s.removeLocked(idx[:take])
			s.mu.Unlock()
			return batch
		}
		w := s.wake
		s.mu.Unlock()
		// The batching delay is queue time clients see, so it gets the same
		// sub-millisecond wake-up as service times.
		due, stop := s.after(deadline)
		select {
		case <-w:
		case <-due:
		}
		stop()
		s.mu.Lock()
	}
}

// compatibleLocked lists, in queue order, the jobs that can join the
// oldest one without the batch exceeding maxBatch, and their summed size.
func (s *scheduler) compatibleLocked() (idx []int, size int) {
	key := s.queue[0].key
	for i, j := range s.queue {
		if j.key != key || size+j.batchSize > s.policy.maxBatch {
			continue
		}
		idx = append(idx, i)
		size += j.batchSize
		if size == s.policy.maxBatch {
			break
		}
	}
	return idx, size
}

// decideLocked returns how many of the compatible jobs to run now, or 0 to
// keep waiting: a full batch or the largest preferred size goes at once;
// when the oldest job's delay is spent, the largest preferred size that is
// available goes, or everything available.
func (s *scheduler) decideLocked(idx []int, size int, expired bool) int {
	pref := s.policy.preferred
	if size >= s.policy.maxBatch || (len(pref) > 0 && size >= pref[len(pref)-1]) {
		return s.prefixUpTo(idx, largestAtMost(pref, size, s.policy.maxBatch))
	}
	if !expired {
		return 0
	}
	return s.prefixUpTo(idx, largestAtMost(pref, size, size))
}

// largestAtMost is the largest preferred size ≤ size, or fallback when none.
func largestAtMost(pref []int, size, fallback int) int {
	best := 0
	for _, p := range pref {
		if p <= size {
			best = p
		}
	}
	if best == 0 {
		return fallback
	}
	return best
}

// prefixUpTo counts the leading compatible jobs whose sizes fit in limit
// (at least one, so the oldest job always makes progress).
func (s *scheduler) prefixUpTo(idx []int, limit int) int {
	n, sum := 0, 0
	for _, i := range idx {
		if sum+s.queue[i].batchSize > limit && n > 0 {
			break
		}
		sum += s.queue[i].batchSize
		n++
	}
	return n
}

func (s *scheduler) removeLocked(idx []int) []*job {
	batch := make([]*job, 0, len(idx))
	take := make(map[int]bool, len(idx))
	for _, i := range idx {
		batch = append(batch, s.queue[i])
		take[i] = true
	}
	rest := s.queue[:0]
	for i, j := range s.queue {
		if !take[i] {
			rest = append(rest, j)
		}
	}
	clear(s.queue[len(rest):])
	s.queue = rest
	return batch
}
