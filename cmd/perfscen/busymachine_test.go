package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/engine"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/memnet"
	"github.com/perfscen/perfscen/internal/wakeprobe"
)

// busySpell is a stretch of fake time during which other work keeps the
// machine busy: from and to are offsets from the machine's start.
type busySpell struct {
	from, to time.Duration
	// others is the share of all CPUs other processes use, load1 the
	// load average, wait perfscen's run-queue wait per unit of its run
	// time, and slow the share of wake-ups delayed by slowBy.
	others, load1, wait, slow float64
	slowBy                    time.Duration
}

// busyMachine plays the machine's CPU counters on the fake clock: quiet
// (2% of the CPUs used by others, load 0.3, every wake-up delayed 20 µs)
// except during its spells. Counters are integrals over fake time, so a
// window's disturbance is the spell's wherever the window falls.
type busyMachine struct {
	start  time.Time
	spells []busySpell
}

func newBusyMachine(spells ...busySpell) *busyMachine {
	return &busyMachine{start: time.Now(), spells: spells}
}

const (
	busyTicksPerSec = 200 // two CPUs at 100 Hz
	busyWakesPerSec = 500 // the probe's 2 ms period
)

var quietSpell = busySpell{others: 0.02, load1: 0.3, wait: 0.02}

// at is the state at offset d.
func (m *busyMachine) at(d time.Duration) busySpell {
	for _, s := range m.spells {
		if d >= s.from && d < s.to {
			return s
		}
	}
	return quietSpell
}

// sample is the engine's SampleCPU: the counters integrated, one
// millisecond at a time, from the start to now.
func (m *busyMachine) sample() (engine.CPUSample, bool) {
	now := time.Since(m.start)
	var busy, total, runNs, waitNs float64
	var wake wakeprobe.Snapshot
	step := time.Millisecond
	for d := time.Duration(0); d < now; d += step {
		s := m.at(d)
		sec := step.Seconds()
		total += busyTicksPerSec * sec
		busy += s.others * busyTicksPerSec * sec
		runNs += 0.5e6
		waitNs += 0.5e6 * s.wait
		// Wake-ups are counted in whole milliseconds: one every other.
		if d%(2*step) == 0 {
			n := uint64(1000)
			slow := uint64(s.slow * float64(n))
			wake.Add(20*time.Microsecond, n-slow)
			wake.Add(s.slowBy, slow)
		}
	}
	s := m.at(now)
	return engine.CPUSample{Busy: uint64(busy), Total: uint64(total), Load1: s.load1,
		RunNs: uint64(runNs), WaitNs: uint64(waitNs), HaveSched: true, Wake: &wake}, true
}

// runMemBusy is runMem on machine m.
func runMemBusy(t *testing.T, m *busyMachine, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var mem memnet.Network
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(wd, "..", "..")
	var out, errb bytes.Buffer
	e := &env{ctx: context.Background(), stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: os.Getenv,
		net: &kinds.Net{Listen: mem.Listen, Dial: mem.Dial}, sampleCPU: m.sample}
	code = runEnv(e, args)
	r := strings.NewReplacer(root+string(filepath.Separator), "")
	return code, r.Replace(out.String()), r.Replace(errb.String())
}
