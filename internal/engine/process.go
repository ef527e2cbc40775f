package engine

import (
	"context"
	"runtime"

	"github.com/perfscen/perfscen/internal/procacct"
	"github.com/perfscen/perfscen/runner/result"
)

// procState is a point's last reading of its server's own accounting.
type procState struct {
	r  procacct.Reading
	ok bool
}

// procRead reads the point's server accounting, if it has one the point
// can use: a source that cannot tell models apart describes a window only
// when one model was under load, so a mix's members get none.
func (pr *pointRunner) procRead(ctx context.Context, together int) procState {
	src := pr.ss.proc
	if src == nil || pr.procOff || (together > 1 && !src.PerModel()) {
		return procState{}
	}
	r, err := src.Read(ctx, pr.model.Name)
	if err != nil {
		pr.procOff = true
		if ctx.Err() == nil {
			pr.notes = append(pr.notes, "server CPU per inference: no more readings: "+err.Error())
		}
		return procState{}
	}
	return procState{r: r, ok: true}
}

// besideServers takes the measured servers that run on this machine apart
// from perfscen out of the window's "other processes": the server under
// test is no neighbour, and a CPU-bound one alone would otherwise read
// as a machine half busy with other work.
func (u *unit) besideServers(d *result.Disturbance, ms []*measured) {
	if d == nil {
		return
	}
	seen := map[procacct.Source]bool{}
	share, any := 0.0, false
	for i, m := range ms {
		src := u.prs[i].ss.proc
		if m == nil || m.proc == nil || src == nil || !src.Beside() || seen[src] || m.win.Duration <= 0 {
			continue
		}
		seen[src] = true
		cpuNs := m.proc.CPUUs * 1e3 * float64(m.proc.Inferences)
		share += cpuNs / (float64(m.win.Duration) * float64(runtime.NumCPU()))
		any = true
	}
	if !any {
		return
	}
	share = min(share, 1)
	d.ServerCPU = &share
	d.OtherCPU = max(d.OtherCPU-share, 0)
}

// procWindow is the window's ProcessStats from the readings around it:
// per inference, by the source's own count where it keeps one, else the
// server's statistics, else the client's successful inferences.
func procWindow(a, b procState, server *result.ServerStats, clientInferences int64) *result.ProcessStats {
	if !a.ok || !b.ok {
		return nil
	}
	d, ok := procacct.Delta(a.r, b.r)
	if !ok {
		return nil
	}
	n := clientInferences
	switch {
	case d.HaveInferences:
		n = int64(d.Inferences)
	case server != nil && !server.Reset && server.InferenceCount > 0:
		n = server.InferenceCount
	}
	if n <= 0 {
		return nil
	}
	ps := &result.ProcessStats{CPUUs: float64(d.CPUNs) / 1e3 / float64(n), Inferences: n, Threads: d.Threads}
	if d.HaveRunQueue {
		v := float64(d.RunQueueNs) / 1e3 / float64(n)
		ps.RunQueueUs = &v
	}
	if d.HavePreempt && d.HaveRunQueue {
		v := float64(d.PreemptNs) / 1e3 / float64(n)
		ps.PreemptUs = &v
	}
	if d.HaveInstructions {
		v := float64(d.Instructions) / float64(n)
		ps.Instructions = &v
	}
	for i, ns := range d.CPUNsByCPU {
		if ns == 0 {
			continue
		}
		for len(ps.CPUUsByCPU) <= i {
			ps.CPUUsByCPU = append(ps.CPUUsByCPU, 0)
		}
		ps.CPUUsByCPU[i] = float64(ns) / 1e3 / float64(n)
	}
	return ps
}

// mergeProcess is the kept windows' ProcessStats taken together: every
// figure's total over every inference, as perf_analyzer merges windows.
// Windows without figures (no inference finished in them, or a reading
// failed) are left out; a figure some window lacks is left out of the
// merge.
func mergeProcess(list []*result.ProcessStats) *result.ProcessStats {
	var out result.ProcessStats
	var runq, preempt, instr, work optionalTotal
	byCPU, split := true, true
	var splitSum []float64
	for _, p := range list {
		if p == nil {
			continue
		}
		n := float64(p.Inferences)
		byCPU = byCPU && p.WorkByCPU
		if len(p.CPUUsByCPU) == 0 {
			split = false
		}
		for i, v := range p.CPUUsByCPU {
			for len(splitSum) <= i {
				splitSum = append(splitSum, 0)
			}
			splitSum[i] += v * n
		}
		out.Inferences += p.Inferences
		out.CPUUs += p.CPUUs * n
		runq.add(p.RunQueueUs, n)
		preempt.add(p.PreemptUs, n)
		instr.add(p.Instructions, n)
		work.add(p.Work, n)
		out.Threads = max(out.Threads, p.Threads)
	}
	if out.Inferences <= 0 {
		return nil
	}
	n := float64(out.Inferences)
	out.CPUUs /= n
	out.RunQueueUs = runq.per(n)
	out.PreemptUs = preempt.per(n)
	out.Instructions = instr.per(n)
	out.Work = work.per(n)
	out.WorkByCPU = byCPU && out.Work != nil
	if split {
		for i := range splitSum {
			splitSum[i] /= n
		}
		out.CPUUsByCPU = splitSum
	}
	return &out
}

// optionalTotal sums a per-inference figure that a source may not give,
// weighted by each window's inferences; one window without it leaves it
// out of the merge, since a mean over the windows that had it would
// describe a different set of requests than the merged CPU time.
type optionalTotal struct {
	sum     float64
	missing bool
}

func (t *optionalTotal) add(v *float64, inferences float64) {
	if v == nil {
		t.missing = true
		return
	}
	t.sum += *v * inferences
}

func (t optionalTotal) per(inferences float64) *float64 {
	if t.missing {
		return nil
	}
	v := t.sum / inferences
	return &v
}
