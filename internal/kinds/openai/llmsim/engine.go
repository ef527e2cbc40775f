package llmsim

import (
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// maxBacklog is how far behind its ideal schedule the engine may fall and
// still catch up.
const maxBacklog = 250 * time.Millisecond

// seq is one request's generation. The engine goroutine advances emitted;
// the HTTP handler reads it after each notify. The counter plus a 1-slot
// notify channel keep memory per request constant however long the output,
// and a slow reader gets several tokens at once instead of blocking the
// engine.
type seq struct {
	input     int // prompt tokens: sets the prefill time
	maxTokens int // tokens to generate
	failAt    int // inject a mid-stream error after this many tokens; 0 = never
	// tokens are the prompt's tokens and hash its reply's seed, for the
	// prefix cache; cached is how many leading prompt tokens the cache
	// held when the sequence was admitted (no prefill for them).
	tokens []string
	hash   uint64
	cached int
	// embed: an embedding request, done once its prompt is prefilled.
	embed bool

	emitted   atomic.Int64
	finished  atomic.Bool // emitted == maxTokens, or failed
	failed    atomic.Bool
	cancelled atomic.Bool // the client went away
	notify    chan struct{}
}

func newSeq(input, maxTokens, failAt int) *seq {
	return &seq{input: input, maxTokens: maxTokens, failAt: failAt, notify: make(chan struct{}, 1)}
}

func (s *seq) wake() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// engine simulates continuous batching: every step decodes one token for
// each running sequence and takes decode_base + decode_per_seq × running,
// times decode_slowdown; sequences admitted at a step add their prefill to
// that step (as a chunked-prefill engine stalls decode while it prefills),
// and get their first token at its end.
type engine struct {
	params atomic.Pointer[Params]
	submit chan *seq
	quit   chan struct{}
	wg     sync.WaitGroup
	now    func() time.Time
	sleep  func(d time.Duration, quit <-chan struct{}) bool

	inFlight atomic.Int64 // running sequences, for tests and stats
	waiting  atomic.Int64 // admitted to the queue, not yet running
	// kvUsage is the fraction of KV-cache blocks the running sequences
	// hold (float64 bits); queries and hits count prompt tokens looked up
	// in the prefix cache and found there: vLLM's gauges and counters.
	kvUsage       atomic.Uint64
	queries, hits atomic.Int64
	cache         *kvCache // the engine goroutine's alone
	cacheBlock    int      // block size the cache was built with
	cacheCapacity int
}

func newEngine(p Params) *engine {
	e := &engine{submit: make(chan *seq, 1024), quit: make(chan struct{}), now: time.Now, sleep: sleepOrQuit}
	e.params.Store(&p)
	return e
}

func sleepOrQuit(d time.Duration, quit <-chan struct{}) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-quit:
		return false
	}
}

func (e *engine) start() {
	e.wg.Add(1)
	go e.run()
}

func (e *engine) close() {
	close(e.quit)
	e.wg.Wait()
}

// stepTime is the length of one step with running sequences, of which
// the admitted ones are prefilled in it.
func stepTime(p *Params, running int, admitted []*seq) time.Duration {
	d := time.Duration(float64(p.DecodeBase+time.Duration(running)*p.DecodePerSeq) * p.DecodeSlowdown)
	for _, s := range admitted {
		d += p.PrefillBase + time.Duration(s.input-s.cached)*p.PrefillPerToken
	}
	return d
}

// admit looks the sequence's prompt up in the prefix cache and caches its
// blocks: a chunked-prefill engine computes them in this step, and the
// next request sharing them finds them. The last prompt token is always
// computed (its logits give the first output token), as vLLM does.
func (e *engine) admit(p *Params, s *seq) {
	if e.cache == nil || e.cacheBlock != p.KVBlockSize || e.cacheCapacity != p.KVCacheBlocks {
		e.cache = newKVCache(p.KVBlockSize, p.KVCacheBlocks)
		e.cacheBlock, e.cacheCapacity = p.KVBlockSize, p.KVCacheBlocks
	}
	e.queries.Add(int64(s.input))
	hs := blockHashes(s.tokens, p.KVBlockSize)
	if p.PrefixCache {
		s.cached = min(e.cache.lookup(hs)*p.KVBlockSize, max(s.input-1, 0))
		e.hits.Add(int64(s.cached))
		e.cache.insert(hs)
	}
}

// retire caches a finished sequence's prompt and reply blocks, so the
// next turn of a conversation, which sends both back, finds them.
func (e *engine) retire(p *Params, s *seq) {
	if !p.PrefixCache || e.cache == nil || s.embed || s.failed.Load() {
		return
	}
	n := int(s.emitted.Load())
	all := make([]string, 0, len(s.tokens)+n)
	all = append(all, s.tokens...)
	for i := range n {
		all = append(all, strings.TrimSpace(tokenText(s.hash, i)))
	}
	e.cache.insert(blockHashes(all, p.KVBlockSize))
}

// usage is the fraction of the KV cache the running sequences hold.
func usage(p *Params, running []*seq) float64 {
	blocks := 0
	for _, s := range running {
		blocks += blocksFor(s.input+int(s.emitted.Load()), p.KVBlockSize)
	}
	return min(float64(blocks)/float64(max(p.KVCacheBlocks, 1)), 1)
}

func (e *engine) run() {
	defer e.wg.Done()
	var running, waiting, admitted []*seq
	var next, lastStall time.Time
	for {
		if len(running) == 0 && len(waiting) == 0 {
			select {
			case s := <-e.submit:
				waiting = append(waiting, s)
			case <-e.quit:
				return
			}
			next = time.Time{}
		}
	drain:
		for {
			select {
			case s := <-e.submit:
				waiting = append(waiting, s)
			default:
				break drain
			}
		}
		p := e.params.Load()
		admitted = admitted[:0]
		for len(waiting) > 0 && len(running) < p.MaxBatch {
			s := waiting[0]
			waiting = waiting[1:]
			if s.cancelled.Load() {
				continue
			}
			e.admit(p, s)
			running = append(running, s)
			admitted = append(admitted, s)
		}
		e.waiting.Store(int64(len(waiting)))
		if len(running) == 0 {
			continue
		}
		e.inFlight.Store(int64(len(running)))
		e.kvUsage.Store(math.Float64bits(usage(p, running)))
		d := stepTime(p, len(running), admitted)
		// Steps follow an ideal schedule so timer lateness (a busy machine
		// waking the engine late) does not accumulate into a slower engine:
		// the steps after a late one start at once until the schedule is
		// met. Only a backlog beyond maxBacklog is dropped; then the
		// machine, not the engine, set the pace.
		now := e.now()
		if next.IsZero() || now.Sub(next) > maxBacklog {
			next = now
		}
		next = next.Add(d)
		if p.StallEvery > 0 {
			if lastStall.IsZero() {
				lastStall = now
			} else if now.Sub(lastStall) >= p.StallEvery {
				lastStall = now
				next = next.Add(p.StallFor)
			}
		}
		if !e.sleep(next.Sub(e.now()), e.quit) {
			return
		}
		kept := running[:0]
		for _, s := range running {
			if s.cancelled.Load() {
				continue
			}
			if s.embed {
				s.finished.Store(true)
				s.wake()
				continue
			}
			n := s.emitted.Add(1)
			switch {
			case s.failAt > 0 && n >= int64(s.failAt):
				s.failed.Store(true)
				s.finished.Store(true)
			case n >= int64(s.maxTokens):
				e.retire(p, s)
				s.finished.Store(true)
			default:
				kept = append(kept, s)
			}
			s.wake()
		}
		clear(running[len(kept):])
		running = kept
		e.inFlight.Store(int64(len(running)))
		e.kvUsage.Store(math.Float64bits(usage(p, running)))
	}
}
