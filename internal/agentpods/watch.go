package agentpods

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// DefaultInterval is how often a Watcher lists the pods of up to 100
// agents.
const DefaultInterval = 5 * time.Second

// IntervalFor is how often to list the pods of a run of agents: every
// 5 s up to 100 agents, then 5 s more per 100. A pod is about 9 KB of
// JSON, so 500 pending pods are 4.5 MB a list: one every 25 s keeps the
// API server's answer near 200 KB/s, and the first warning still comes
// long before --agent-wait's minutes.
func IntervalFor(agents int) time.Duration {
	return DefaultInterval * time.Duration(max(1, (agents+99)/100))
}

// Watcher lists the agents' pods while the coordinator waits for its
// agents, and warns as soon as Kubernetes says why some are missing,
// long before the wait ends.
type Watcher struct {
	// List lists the agents' pods (Client.Pods with the selector).
	List func(ctx context.Context) ([]Pod, error)
	// Agents is the run's agent count.
	Agents int
	// Log hears the warnings.
	Log io.Writer
	// Wait is the coordinator's --agent-wait, for the warnings' words.
	Wait time.Duration
	// Interval between lists (DefaultInterval; IntervalFor(Agents) fits
	// it to the run).
	Interval time.Duration

	mu     sync.Mutex
	warned map[string]bool
}

// Run lists the pods until ctx ends, logging each finding once, when it
// first appears or its agents change, and each distinct error once.
func (w *Watcher) Run(ctx context.Context) {
	iv := w.Interval
	if iv <= 0 {
		iv = DefaultInterval
	}
	t := time.NewTicker(iv)
	defer t.Stop()
	for {
		w.poll(ctx, false)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// poll lists once and logs what is new; final returns the findings'
// final words instead of logging them.
func (w *Watcher) poll(ctx context.Context, final bool) string {
	pods, err := w.List(ctx)
	if ctx.Err() != nil {
		return ""
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.warned == nil {
		w.warned = map[string]bool{}
	}
	if err != nil {
		line := "warning: cannot read the agents' pods, so a missing agent cannot be explained: " + err.Error()
		if !final && !w.warned[line] {
			w.warned[line] = true
			fmt.Fprintf(w.Log, "perfscen: %s\n", line)
		}
		return ""
	}
	var out []string
	for _, f := range Explain(pods, w.Agents) {
		if final {
			out = append(out, f.Text(true))
			continue
		}
		line := f.Text(false)
		if !w.warned[line] {
			w.warned[line] = true
			fmt.Fprintf(w.Log, "perfscen: warning: %s; the coordinator waits for every agent until --agent-wait %s ends\n", line, w.Wait)
		}
	}
	return strings.Join(out, "; ")
}

// Final lists the pods once more and says why agents are missing, in
// the past tense, "" when Kubernetes says nothing (or cannot be asked).
func (w *Watcher) Final(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return w.poll(ctx, true)
}
