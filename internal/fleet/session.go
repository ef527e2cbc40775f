package fleet

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/perfscen/perfscen/internal/engine"
	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/fleet/fleetpb"
)

// session is one engine session on every agent: it collects each agent's
// report of each window and hands the window on once every agent sent it,
// in window order; a window an agent does not send in time, or an agent
// lost, fails the session naming the agent.
type session struct {
	c      *Coordinator
	spec   engine.SessionSpec
	agents []*member

	events chan event
	out    chan []engine.WindowReport

	mu       sync.Mutex
	stopping bool
	finished chan struct{} // closed when every agent is done or the session failed
	totals   []engine.Totals
	isDone   []bool
	err      error
}

type event struct {
	agent  int // index into session.agents
	window *engine.WindowReport
	totals *engine.Totals
	fail   error
}

// windowSlack is how long after a window's end every agent's report may
// take to arrive: the aggregators' cut grace, the network, a busy host.
func (s *session) windowSlack() time.Duration {
	return max(2*time.Second, s.spec.Window) + missedBeats*s.c.opts.Heartbeat
}

func newSession(c *Coordinator, spec engine.SessionSpec, agents []*member) *session {
	s := &session{c: c, spec: spec, agents: agents, events: make(chan event, 64),
		out: make(chan []engine.WindowReport, 16), finished: make(chan struct{}),
		totals: make([]engine.Totals, len(agents)), isDone: make([]bool, len(agents))}
	go s.run()
	return s
}

// slot is the position of agent index in s.agents.
func (s *session) slot(index int) int {
	for i, m := range s.agents {
		if m.index == index {
			return i
		}
	}
	return -1
}

func (s *session) window(index int, w engine.WindowReport) {
	if i := s.slot(index); i >= 0 {
		s.send(event{agent: i, window: &w})
	}
}

func (s *session) done(index int, t engine.Totals) {
	if i := s.slot(index); i >= 0 {
		s.send(event{agent: i, totals: &t})
	}
}

func (s *session) fail(err error) { s.send(event{agent: -1, fail: err}) }

// send hands an event to the session's loop; once the session is over
// nothing waits for it.
func (s *session) send(e event) {
	select {
	case s.events <- e:
	case <-s.finished:
	}
}

// run assembles the windows. It owns every field below until finished.
func (s *session) run() {
	defer s.c.endSession(s.spec.ID)
	n := len(s.agents)
	reports := map[int][]*engine.WindowReport{} // window → report per agent
	done := make([]bool, n)
	ndone := 0
	next := 0
	var queue [][]engine.WindowReport // complete windows not yet taken
	deadline := time.NewTimer(time.Hour)
	defer deadline.Stop()
	arm := func() {
		if s.spec.Whole || s.isStopping() {
			deadline.Stop()
			return
		}
		end := s.spec.Epoch.Add(s.spec.Warmup + time.Duration(next+1)*s.spec.Window + s.windowSlack())
		deadline.Reset(time.Until(end))
	}
	arm()
	finish := func(err error) {
		s.mu.Lock()
		if s.err == nil {
			s.err = err
		}
		s.mu.Unlock()
		close(s.out)
		close(s.finished)
	}
	for {
		var out chan []engine.WindowReport
		var head []engine.WindowReport
		if len(queue) > 0 {
			out, head = s.out, queue[0]
		}
		select {
		case out <- head:
			queue = queue[1:]
		case e := <-s.events:
			switch {
			case e.fail != nil:
				finish(e.fail)
				return
			case e.window != nil:
				w := e.window
				if w.Index < next {
					continue // a duplicate
				}
				if reports[w.Index] == nil {
					reports[w.Index] = make([]*engine.WindowReport, n)
				}
				reports[w.Index][e.agent] = w
				for complete(reports[next]) && !s.spec.Whole {
					queue = append(queue, collect(reports[next]))
					delete(reports, next)
					next++
					arm()
				}
			case e.totals != nil:
				if done[e.agent] {
					continue
				}
				done[e.agent] = true
				ndone++
				s.mu.Lock()
				s.totals[e.agent] = *e.totals
				s.isDone[e.agent] = true
				s.mu.Unlock()
				if e.totals.Err != "" {
					finish(failure.Env(fmt.Errorf("%s: %s", s.agents[e.agent], e.totals.Err)))
					return
				}
				if ndone < n {
					continue
				}
				if s.spec.Whole {
					// Every agent's one window, or none where a small
					// budget left an agent without requests.
					var all []engine.WindowReport
					for _, r := range reports[0] {
						if r != nil {
							all = append(all, *r)
						}
					}
					if len(all) > 0 {
						queue = append(queue, all)
					}
				}
				// Hand on what is complete, then end.
				for _, w := range queue {
					select {
					case s.out <- w:
					case <-time.After(s.windowSlack()):
					}
				}
				finish(nil)
				return
			}
		case <-deadline.C:
			if s.isStopping() {
				continue
			}
			var late []string
			for i, m := range s.agents {
				if reports[next] == nil || reports[next][i] == nil {
					late = append(late, m.String())
				}
			}
			sort.Strings(late)
			finish(failure.Env(fmt.Errorf("%s sent no window %d of session %d within %s of its end: could not measure the whole load",
				strings.Join(late, ", "), next, s.spec.ID, s.windowSlack())))
			return
		}
	}
}

func complete(reps []*engine.WindowReport) bool {
	if reps == nil {
		return false
	}
	for _, r := range reps {
		if r == nil {
			return false
		}
	}
	return true
}

func collect(reps []*engine.WindowReport) []engine.WindowReport {
	out := make([]engine.WindowReport, len(reps))
	for i, r := range reps {
		out[i] = *r
	}
	return out
}

func (s *session) isStopping() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopping
}

// Windows implements engine.RemoteSession.
func (s *session) Windows() <-chan []engine.WindowReport { return s.out }

// Stop implements engine.RemoteSession: every agent is told to stop and
// its totals awaited (its drain, plus the heartbeats that would lose it).
func (s *session) Stop() ([]engine.Totals, error) {
	s.mu.Lock()
	already := s.stopping
	s.stopping = true
	s.mu.Unlock()
	if !already {
		for _, m := range s.agents {
			m.post(&fleetpb.CoordinatorMessage{Body: &fleetpb.CoordinatorMessage_Stop{Stop: &fleetpb.StopSession{Id: s.spec.ID}}})
		}
	}
	// Windows not taken are dropped, so the loop can finish.
	go func() {
		for range s.out {
		}
	}()
	limit := time.NewTimer(limitOf(s))
	defer limit.Stop()
	select {
	case <-s.finished:
	case <-limit.C:
		s.fail(failure.Env(fmt.Errorf("session %d: %s did not finish within %s of the stop", s.spec.ID, s.pending(), limitOf(s))))
		<-s.finished
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]engine.Totals(nil), s.totals...), s.err
}

// pending names the agents whose totals have not come.
func (s *session) pending() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	for i, m := range s.agents {
		if !s.isDone[i] {
			names = append(names, m.String())
		}
	}
	return strings.Join(names, ", ")
}

// limitOf is how long a stop may take.
func limitOf(s *session) time.Duration {
	return s.spec.Drain + time.Second + (missedBeats+1)*s.c.opts.Heartbeat
}
