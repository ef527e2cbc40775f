package main

import (
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfscen/perfscen/internal/exitcode"
)

// The case of a shared runner at load 11–20: the search's probe at
// concurrency 4 meets p90 < 48ms in its windows, then one window, while
// the machine is busy with other work, reads p99 290ms and trips
// `abort_on: p99 > 200ms`. One window is one draw: the probe must not be
// stopped by it and called failing, which made the search find 3 and the
// run fail `max_concurrency >= 4` (exit 1) on what the machine did.
//
// On the fake clock the server stalls 250 ms once, at 12.1 s, inside the
// c=4 probe's fourth window, and the machine is too busy (load 15.2,
// other processes 93% of the CPUs, 3% of wake-ups 4 ms late) from 12 s
// to 12.6 s.
func TestSearchProbeSlowWindowOnABusyMachine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		file := copyScenario(t, "delay-max-concurrency.yaml", dir)
		m := newBusyMachine(busySpell{from: 12 * time.Second, to: 12600 * time.Millisecond,
			others: 0.93, load1: 15.2, wait: 0.8, slow: 0.03, slowBy: 4 * time.Millisecond})
		code, stdout, stderr := runMemBusy(t, m, "run", "-q", file, "--out-dir", dir,
			"--model-param", "delay.stall_every=12.35s", "--model-param", "delay.stall_for=250ms")
		run := readResult(t, filepath.Join(dir, "delay-max-concurrency.json"))
		p := searchPoint(t, run)
		v, _ := p.Summary.Value("max_concurrency")
		if code == exitcode.CheckFailed || v != 4 {
			t.Fatalf("exit %d, found %v (probes %s): a slow window on a busy machine made the answer lower\n%s%s",
				code, v, probeLevels(p.Searched), stdout, stderr)
		}
		if code != exitcode.OK || probeLevels(p.Searched) != "1:meets 32:aborted 16:fails 8:fails 4:meets 6:fails 5:fails" {
			t.Errorf("exit %d, probes %s\n%s", code, probeLevels(p.Searched), stdout)
		}
		// The slow window was measured, and left out of the kept trials
		// by the stability rule, as any disturbed window is.
		for _, pt := range run.Points {
			if !strings.HasSuffix(pt.ID, "/c=4") {
				continue
			}
			slow := 0
			for _, w := range pt.Windows {
				if w.Disturbance != nil && w.Disturbance.OtherCPU > 0.9 {
					slow++
				}
			}
			if slow == 0 || pt.Status != "stable" {
				t.Errorf("c=4: status %s, %d busy window(s) of %d", pt.Status, slow, len(pt.Windows))
			}
		}
	})
}
