package engine

import "time"

// cutter assigns samples to windows by completion time and decides where
// windows end. It is driven by the aggregator goroutine (samples as they
// arrive, ticks from a timer) but holds no clock of its own, so tests feed
// it synthetic samples.
type cutter struct {
	warmupEnd time.Duration // samples completing earlier are dropped
	count     bool          // count_windows instead of time_windows
	window    time.Duration // time mode: window length
	minCount  int64         // count mode: successful requests required
	step      time.Duration // count mode: the window grows by this much
	maxLen    time.Duration // count mode: a window closes regardless after this

	cur, next *acc
	boundary  time.Duration // where cur would end now

	dropped int64 // warm-up completions
	late    int64 // late sends among measured samples
}

func newCutter(c cutter) *cutter {
	c.cur = newAcc(c.warmupEnd)
	c.next = newAcc(0)
	c.boundary = c.warmupEnd + c.length()
	return &c
}

func (c *cutter) length() time.Duration {
	if c.count {
		return c.step
	}
	return c.window
}

// add places one completed request. A request finishing before the current
// window began (a straggler reported after its window was cut) counts in the
// current window, as perf_analyzer would count it at its next collection.
func (c *cutter) add(s *sample) {
	if s.Done < c.warmupEnd {
		c.dropped++
		return
	}
	if s.late() {
		c.late++
	}
	if s.Done >= c.boundary {
		c.next.add(s)
		return
	}
	c.cur.add(s)
}

// due is when the aggregator should next call tick.
func (c *cutter) due() time.Duration { return c.boundary }

// tick is called once the clock has passed due() (plus a small grace for
// samples still in the channel). It returns the closed window, or nil when a
// count window needs more time.
func (c *cutter) tick() *acc {
	// A window in which requests only failed closes at once: it can never
	// reach its count, and the point is decided by that alone.
	onlyErrors := c.cur.n == 0 && c.cur.errs > 0
	if c.count && c.cur.n < c.minCount && !onlyErrors && c.boundary-c.cur.start < c.maxLen {
		// perf_analyzer sleeps another second and checks again.
		c.boundary += c.step
		start := c.cur.start
		c.cur.merge(c.next)
		c.cur.start, c.cur.end = start, 0
		c.next = newAcc(0)
		return nil
	}
	closed := c.cur
	closed.end = c.boundary
	c.cur = c.next
	c.cur.start = c.boundary
	c.next = newAcc(0)
	c.boundary += c.length()
	return closed
}
