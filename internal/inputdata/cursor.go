package inputdata

// Request is the next payload a worker sends.
type Request struct {
	*Step
	Stream int  // index into Data.Streams
	Index  int  // position within the stream
	Start  bool // first request of a sequence (Sequences data only)
	End    bool // last request of a sequence (Sequences data only)
}

// Cursor walks Data round-robin for one worker. It is not safe for
// concurrent use; each worker owns one, so the hot path takes no lock.
type Cursor struct {
	d       *Data
	stride  int
	next    int // flat data: request counter; sequences: stream counter
	stream  int
	index   int
	started bool
}

// Cursor returns worker's cursor, one of workers. Like perf_analyzer, worker
// w of n sends requests w, w+n, w+2n, ... of flat data; with streams it
// plays streams w, w+n, ... each from start to end.
func (d *Data) Cursor(worker, workers int) *Cursor {
	if workers < 1 {
		workers = 1
	}
	return &Cursor{d: d, stride: workers, next: worker}
}

// Next returns the request to send now and advances.
func (c *Cursor) Next() Request {
	if !c.d.Sequences {
		reqs := c.d.Streams[0]
		i := c.next % len(reqs)
		c.next = (c.next + c.stride) % (len(reqs) * c.stride)
		return Request{Step: &reqs[i], Index: i}
	}
	if !c.started || c.index >= len(c.d.Streams[c.stream]) {
		if c.started {
			c.next = (c.next + c.stride) % (len(c.d.Streams) * c.stride)
		}
		c.started = true
		c.stream = c.next % len(c.d.Streams)
		c.index = 0
	}
	s := c.d.Streams[c.stream]
	r := Request{Step: &s[c.index], Stream: c.stream, Index: c.index,
		Start: c.index == 0, End: c.index == len(s)-1}
	c.index++
	return r
}
