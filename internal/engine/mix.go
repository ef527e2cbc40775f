package engine

import (
	"strings"
	"time"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// mixTotal is the whole mix's figures at one step, from its members'
// windows, which cover the same seconds (unit.segment): per window and per
// kept trial the members' requests merged, latencies pooled from the merged
// histograms (every request of the mix), throughput the sum of the
// members' (inferences/s, each at its own batch size), server figures
// summed over the members' models.
func mixTotal(u *unit, pts []*result.Point) *result.Point {
	first := pts[0]
	names := make([]string, len(u.prs))
	batch := first.BatchSize
	for i, pr := range u.prs {
		names[i] = pr.model.Name
		if pts[i].BatchSize != batch {
			batch = 0 // the members batch differently
		}
	}
	out := &result.Point{
		ID: plan.MixTotalID(u.mix, first.ID), Model: u.mix, ModelName: strings.Join(names, "+"), Mix: u.mix,
		Server: first.Server, Protocol: first.Protocol, SharedMemory: first.SharedMemory, BatchSize: batch,
		Coords: first.Coords, Status: result.PointStable,
	}
	rank := map[string]int{result.PointStable: 0, result.PointUnstable: 1, result.PointPartial: 2, result.PointFailed: 3}
	var classes classTally
	for i, p := range pts {
		for _, c := range p.Errors.Classes {
			classes.addN(c.Class, c.Count, c.Example)
		}
		if rank[p.Status] > rank[out.Status] {
			out.Status = p.Status
		}
		out.Concurrency += p.Concurrency
		out.RequestRate += p.RequestRate
		out.Errors.Count += p.Errors.Count
		for _, e := range p.Errors.First {
			if len(out.Errors.First) < maxDistinct {
				out.Errors.First = append(out.Errors.First, p.Model+": "+e)
			}
		}
		out.Validation.Enabled = out.Validation.Enabled || p.Validation.Enabled
		out.Validation.Checked += p.Validation.Checked
		out.Validation.Mismatches += p.Validation.Mismatches
		out.LateSends += p.LateSends
		if p.Status == result.PointFailed {
			out.Notes = append(out.Notes, u.prs[i].p.Model+" failed: the mix could not be measured")
		}
	}
	out.Errors.Classes = classes.list()
	out.Notes = append(out.Notes, "whole mix: "+strings.Join(u.mixMembers(), ", ")+
		" under load together; throughput is the members' sum, latencies are every request's of the mix")
	pct := u.rs.plan.Measurement.Percentile
	n := len(u.prs[0].windows)
	for i := 0; i < n; i++ {
		w, tput := u.windowTotal(i)
		m := u.prs[0].windows[i]
		out.Windows = append(out.Windows, result.Window{Index: i, Duration: m.win.Duration, Throughput: tput,
			LatencyUs: w.stabilityLatencyUs(pct), Requests: w.n, Errors: w.errs, Kept: m.win.Kept, Disturbance: m.win.Disturbance})
	}
	if len(pts) == 0 || len(pts[0].Trials) == 0 {
		return out
	}
	sum := newAcc(0)
	var dur time.Duration
	var servers []*result.ServerStats
	var gpus []*result.GPUMetrics
	var engines []*result.EngineMetrics
	for k, i := range u.prs[0].kept {
		w, tput := u.windowTotal(i)
		m := u.prs[0].windows[i]
		met := w.metrics(1, m.win.Duration)
		met.Throughput = tput
		var ws []*result.ServerStats
		var gs []*result.GPUMetrics
		var es []*result.EngineMetrics
		for _, pr := range u.prs {
			ws = append(ws, pr.windows[i].server)
			gs = append(gs, pr.windows[i].gpu)
			es = append(es, pr.windows[i].engine)
		}
		met.Server, met.GPU = mergeServer(ws), mergeGPU(gs)
		if met.LLM != nil {
			met.LLM.Engine = sumEngines(es)
		}
		if met.LLM != nil {
			engines = append(engines, met.LLM.Engine)
		}
		hist, herr := w.encodeHist()
		if herr != nil {
			out.Notes = append(out.Notes, herr.Error())
		}
		out.Trials = append(out.Trials, result.Trial{Index: k, Start: m.startWall, Duration: m.win.Duration,
			Metrics: met, Histogram: hist, Disturbance: m.win.Disturbance})
		sum.merge(w)
		dur += m.win.Duration
		servers = append(servers, ws...)
		gpus = append(gpus, gs...)
	}
	out.Summary = sum.metrics(1, dur)
	out.Summary.Throughput = 0
	for _, p := range pts {
		out.Summary.Throughput += p.Summary.Throughput
	}
	out.Summary.Server, out.Summary.GPU = mergeServer(servers), mergeGPU(gpus)
	if out.Summary.LLM != nil {
		out.Summary.LLM.Engine = mergeEngine(engines)
	}
	return out
}

// windowTotal merges window i of every member: the requests of the mix
// and its throughput (the members' sum, each at its batch size).
func (u *unit) windowTotal(i int) (*acc, float64) {
	w := newAcc(0)
	tput := 0.0
	for _, pr := range u.prs {
		m := pr.windows[i]
		w.merge(m.acc)
		tput += m.win.Throughput
	}
	return w, tput
}

func (u *unit) mixMembers() []string {
	out := make([]string, len(u.prs))
	for i, pr := range u.prs {
		out[i] = pr.p.Model
	}
	return out
}
