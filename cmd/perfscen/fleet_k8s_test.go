package main

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfscen/perfscen/internal/agentpods"
)

// Agents Kubernetes cannot schedule: the coordinator, watching their pods
// (--agent-pods, as perfscen k8s runs it), warns at once with the
// scheduler's reason, waits out --agent-wait, and gives up with exit 3
// saying they were never scheduled.
func TestFleetAgentPodsNeverScheduled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newFleetLab(t, nil)
		b, err := os.ReadFile("../../internal/agentpods/testdata/unschedulable.json")
		if err != nil {
			t.Fatal(err)
		}
		pods, err := agentpods.DecodeList(b)
		if err != nil {
			t.Fatal(err)
		}
		var selector atomic.Value
		var lists atomic.Int32
		l.pods = func(sel string) (func(context.Context) ([]agentpods.Pod, error), error) {
			selector.Store(sel)
			return func(context.Context) ([]agentpods.Pod, error) {
				lists.Add(1)
				return pods, nil
			}, nil
		}
		sc := l.scenario("fleet.yaml", fleetIterations)
		start := time.Now()
		c := l.coordinator(2, sc, "--agent-wait", "1m", "--agent-pods", "app.kubernetes.io/instance=perfscen,app.kubernetes.io/component=agent")
		waitFor(t, c, "warning: agent index(es) 0-1 not scheduled yet")
		if early := time.Since(start); early > 10*time.Second {
			t.Errorf("warned after %s", early)
		}
		if c.wait() != 3 {
			t.Fatal(c)
		}
		if took := time.Since(start); took != time.Minute {
			t.Errorf("gave up after %s, want --agent-wait's 1m", took)
		}
		log := c.err.String()
		want := "0 of 2 agent(s) ready after 1m0s; missing agent index(es) 0, 1; Kubernetes: agent index(es) 0-1 never scheduled (pods perfscen-agents-0-rk6hq, perfscen-agents-1-mswhk): 0/1 nodes are available: 1 Insufficient cpu."
		if !strings.Contains(log, want) || strings.Count(log, "not scheduled yet") != 1 {
			t.Errorf("log:\n%s\nwant it to warn once and end with %q", log, want)
		}
		if selector.Load() != "app.kubernetes.io/instance=perfscen,app.kubernetes.io/component=agent" || lists.Load() < 12 {
			t.Errorf("selector %v, listed %d times in a minute", selector.Load(), lists.Load())
		}
	})
}

// Outside a pod (or without the API server) the run goes on and says the
// pods cannot be read; a selector of another grammar is refused (2).
func TestFleetAgentPodsUnavailable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newFleetLab(t, nil)
		l.pods = func(string) (func(context.Context) ([]agentpods.Pod, error), error) {
			return nil, errors.New("not in a Kubernetes pod: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set")
		}
		sc := l.scenario("fleet.yaml", fleetIterations)
		c := l.coordinator(2, sc, "--agent-pods", "app=agent")
		l.agent(0, sc, nil)
		l.agent(1, sc, nil)
		if c.wait() != 0 || !strings.Contains(c.err.String(), "warning: --agent-pods: not in a Kubernetes pod") {
			t.Fatal(c)
		}
		bad := l.coordinator(2, sc, "--agent-pods", "app!=agent")
		if bad.wait() != 2 || !strings.Contains(bad.err.String(), `--agent-pods "app!=agent": "app!=agent": give labels as key=value`) {
			t.Fatal(bad)
		}
	})
}

// The coordinator stopped by a signal mid-run (its pod deleted): the
// run is cut short, so the agents exit with its code, not 0, and no Job
// of agents reads Complete.
func TestFleetCoordinatorInterrupted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newFleetLab(t, nil)
		sc := l.scenario("fleet.yaml", fleetSlow)
		c := l.coordinator(2, sc)
		a0, a1 := l.agent(0, sc, nil), l.agent(1, sc, nil)
		waitFor(t, c, "session 1: point")
		time.Sleep(1500 * time.Millisecond)
		c.cancel()
		if c.wait() != 3 {
			t.Fatal(c)
		}
		for _, a := range []*proc{a0, a1} {
			if a.wait() != 3 || !strings.Contains(a.err.String(), "the coordinator was interrupted") {
				t.Fatal(a)
			}
		}
	})
}
