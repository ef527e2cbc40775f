package engine

import (
	"context"
	"errors"
	"fmt"
	"github.com/perfscen/perfscen/internal/kinds"
	"strconv"
	"time"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// finish assembles the point's result from its windows and kept trials.
func (pr *pointRunner) finish(interrupted bool, err error) *result.Point {
	p := pr.p
	proto := p.Protocol
	if proto == "" {
		proto = pr.ss.srv.Protocol
	}
	out := &result.Point{
		ID: p.ID, Model: p.Model, ModelName: pr.model.Name, ModelVersion: pr.model.Version,
		Server: p.Server, Mix: p.Mix,
		Protocol: proto, SharedMemory: orNone(p.SharedMemory), BatchSize: max(p.BatchSize, 1),
		Mode: p.Load.Mode, Concurrency: p.Load.Concurrency, RequestRate: p.Load.Rate,
		Shapes: p.Shapes, Coords: p.Coords, Status: pr.status, Search: p.Search,
		Errors:    result.ErrorInfo{Count: pr.errs.total, First: pr.errs.first(), Classes: pr.classes.list()},
		LateSends: pr.late,
		Notes:     pr.notes,
		Validation: result.Validation{Enabled: pr.pl.validate, Checked: pr.checked,
			Mismatches: pr.mismatches.total, First: pr.mismatches.first(), Sampled: pr.pl.validateEvery > 1},
	}
	if v, ok := pr.pl.kind.(kinds.Versioned); ok && out.ModelVersion == "" {
		if ver, ok := v.ModelVersion(context.Background()); ok {
			out.ModelVersion = ver
		}
	}
	if pr.passedOver > 0 {
		out.Notes = append(out.Notes, strconv.Itoa(pr.passedOver)+" interleaved window(s) in which no request finished were passed over; the next window of the same session was kept")
	}
	switch {
	case interrupted:
		out.Status = result.PointPartial
	case err != nil:
		out.Status = result.PointFailed
		out.Notes = append(out.Notes, err.Error())
	case pr.failure != nil:
		out.Status = result.PointFailed
		out.Notes = append(out.Notes, pr.failure.Error())
	case out.Status == "":
		out.Status = result.PointFailed
	}
	if out.Status == result.PointFailed || errors.Is(err, ErrUnreachable) {
		// A point that could not be measured has no figures: windows
		// kept before its server went away would read as a measurement
		// of a server that no longer answered. Its windows stay listed.
		pr.kept = nil
	}
	kept := map[int]bool{}
	for _, i := range pr.kept {
		kept[i] = true
	}
	batch := max(p.BatchSize, 1)
	total := newAcc(0)
	var dur time.Duration
	var servers []*result.ServerStats
	var procs []*result.ProcessStats
	var gpus []*result.GPUMetrics
	var engines []*result.EngineMetrics
	for i, m := range pr.windows {
		m.win.Kept = kept[i]
		out.Windows = append(out.Windows, m.win)
	}
	for k, i := range pr.kept {
		m := pr.windows[i]
		met := m.acc.metrics(batch, m.win.Duration)
		met.Server, met.GPU, met.Process = m.server, m.gpu, m.proc
		if met.LLM != nil {
			met.LLM.Engine = m.engine
		}
		hist, herr := m.acc.encodeHist()
		if herr != nil {
			out.Notes = append(out.Notes, herr.Error())
		}
		out.Trials = append(out.Trials, result.Trial{Index: k, Start: m.startWall,
			Duration: m.win.Duration, Metrics: met, Histogram: hist, Disturbance: m.win.Disturbance})
		total.merge(m.acc)
		dur += m.win.Duration
		servers = append(servers, m.server)
		procs = append(procs, m.proc)
		gpus = append(gpus, m.gpu)
		engines = append(engines, m.engine)
	}
	if len(pr.kept) > 0 {
		// perf_analyzer's merge: Σrequests × batch ÷ Σduration, latencies
		// pooled, server deltas summed.
		out.Summary = total.metrics(batch, dur)
		out.Summary.Server = mergeServer(servers)
		out.Summary.Process = mergeProcess(procs)
		out.Summary.GPU = mergeGPU(gpus)
		if out.Summary.LLM != nil {
			out.Summary.LLM.Engine = mergeEngine(engines)
		}
		out.Notes = append(out.Notes, llmNotes(out.Summary.LLM)...)
	}
	if pr.late > 0 && p.Load.Mode == plan.LoadRequestRate {
		// Late sends are counted over every window, stabilization
		// included: compare them with every request sent in those.
		var sent int64
		for _, m := range pr.windows {
			sent += m.win.Requests + m.win.Errors
		}
		if sent > 0 && float64(pr.late) > 0.01*float64(sent) {
			why := "the client may be the bottleneck"
			if achieved := out.Summary.Throughput / float64(batch); p.Load.Rate > 0 && achieved < 0.95*p.Load.Rate {
				// Sends wait for a free worker when replies are slow: the
				// server did not keep up with the rate.
				why = fmt.Sprintf("the server answered %.1f requests/s of the %.1f/s asked, so sends waited for replies (the server is saturated, not the client)", achieved, p.Load.Rate)
			}
			out.Notes = append(out.Notes, fmt.Sprintf("%d of %d requests (all windows, stabilization included) left over 1 ms after their schedule; %s", pr.late, sent, why))
		}
	}
	if n := len(pr.windows); n > 0 && pr.ss.engine != nil {
		out.EngineSeries = pr.ss.engine.series(pr.model.Name, pr.windows[0].start, pr.windows[n-1].end)
	}
	if errors.Is(err, ErrUnreachable) {
		out.Status = result.PointFailed
	}
	return out
}

func orNone(s plan.SharedMemory) plan.SharedMemory {
	if s == "" {
		return plan.ShmNone
	}
	return s
}

// mergeGPU folds per-window GPU figures: averages averaged, maxima maxed.
func mergeGPU(list []*result.GPUMetrics) *result.GPUMetrics {
	var out result.GPUMetrics
	n := 0
	for _, g := range list {
		if g == nil {
			continue
		}
		n++
		out.UtilizationAvg += g.UtilizationAvg
		out.PowerAvgWatts += g.PowerAvgWatts
		out.MemoryUsedMax = max(out.MemoryUsedMax, g.MemoryUsedMax)
		out.MemoryTotalMax = max(out.MemoryTotalMax, g.MemoryTotalMax)
	}
	if n == 0 {
		return nil
	}
	out.UtilizationAvg /= float64(n)
	out.PowerAvgWatts /= float64(n)
	return &out
}
