package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/perfscen/perfscen/internal/report/svg"
	"github.com/perfscen/perfscen/runner/result"
)

// The figures of the LLM workloads people replay: TTFT by turn of
// multi-turn sessions, the engine's own figures (its Prometheus endpoint),
// and how well open-loop sends kept their schedule.

// workloadHeader is the second LLM table: per point, TTFT by turn, the
// engine's figures and the schedule error.
var workloadHeader = []string{"point", "TTFT p50 by turn", "prefix-cache hits", "KV-cache avg", "KV-cache max", "running avg", "waiting avg", "schedule error p50", "schedule error p99"}

// workloadRows are its rows; nil when no point has any of these figures.
func workloadRows(run *result.Run) [][]string {
	var rows [][]string
	for i := range run.Points {
		p := &run.Points[i]
		figs := p.FigureMetrics()
		var turns string
		var eng *result.EngineMetrics
		if l := figs.LLM; l != nil {
			turns, eng = turnList(l.Turns), l.Engine
		}
		se := figs.ScheduleError
		if turns == "" && eng == nil && se == nil {
			continue
		}
		row := []string{p.ID, orDash(turns), hitRate(eng), gaugeCell(eng, kvGauge, avgOf, "fraction"), gaugeCell(eng, kvGauge, maxOf, "fraction"),
			gaugeCell(eng, runGauge, avgOf, ""), gaugeCell(eng, waitGauge, avgOf, ""), "-", "-"}
		if se != nil && se.Has() {
			row[7], row[8] = quantity(se.P50Us, "us"), quantity(se.P99Us, "us")
		}
		rows = append(rows, row)
	}
	return rows
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// turnList is "1: 30.1ms, 2: 26.6ms, …" (streamed turns only).
func turnList(ts []result.TurnMetrics) string {
	var parts []string
	for _, t := range ts {
		if t.TTFT.Has() {
			parts = append(parts, strconv.Itoa(t.Turn)+": "+quantity(t.TTFT.P50Us, "us"))
		}
	}
	return strings.Join(parts, ", ")
}

var (
	kvGauge   = func(e *result.EngineMetrics) *result.Gauge { return e.KVCacheUsage }
	runGauge  = func(e *result.EngineMetrics) *result.Gauge { return e.Running }
	waitGauge = func(e *result.EngineMetrics) *result.Gauge { return e.Waiting }
	avgOf     = func(g *result.Gauge) float64 { return g.Avg }
	maxOf     = func(g *result.Gauge) float64 { return g.Max }
)

func gaugeCell(e *result.EngineMetrics, pick func(e *result.EngineMetrics) *result.Gauge, f func(g *result.Gauge) float64, unit string) string {
	if e == nil || pick(e) == nil {
		return "-"
	}
	if unit == "" {
		return strconv.FormatFloat(f(pick(e)), 'f', 1, 64)
	}
	return quantity(f(pick(e)), unit)
}

func hitRate(e *result.EngineMetrics) string {
	if e == nil {
		return "-"
	}
	r, ok := e.PrefixCache.HitRate()
	if !ok {
		return "-"
	}
	return quantity(r, "fraction")
}

// workloadBlock adds a point's turn, engine and schedule figures under its
// LLM block.
func workloadBlock(w io.Writer, p *result.Point) {
	figs := p.FigureMetrics()
	if se := figs.ScheduleError; se != nil && se.Has() {
		fmt.Fprintf(w, "  Schedule error (send − due): avg %s, p50 %s, p90 %s, p95 %s, p99 %s, max %s (n=%d%s)\n",
			quantity(se.AvgUs, "us"), quantity(se.P50Us, "us"), quantity(se.P90Us, "us"), quantity(se.P95Us, "us"),
			quantity(se.P99Us, "us"), quantity(se.MaxUs, "us"), se.Count, waitPhrase(figs.ScheduleWait))
	}
	l := figs.LLM
	if l == nil {
		return
	}
	if len(l.Turns) > 0 {
		fmt.Fprintf(w, "  By turn:\n")
		for _, t := range l.Turns {
			in := ""
			if t.InputTokens > 0 && t.Requests > 0 {
				in = fmt.Sprintf(", input tokens avg %.0f", float64(t.InputTokens)/float64(t.Requests))
			}
			ttft := "no streamed reply"
			if t.TTFT.Has() {
				ttft = fmt.Sprintf("TTFT avg %s, p50 %s, p95 %s", quantity(t.TTFT.AvgUs, "us"), quantity(t.TTFT.P50Us, "us"), quantity(t.TTFT.P95Us, "us"))
			}
			fmt.Fprintf(w, "    Turn %d: %d requests, %s%s\n", t.Turn, t.Requests, ttft, in)
		}
	}
	if e := l.Engine; e != nil {
		var parts []string
		if r, ok := e.PrefixCache.HitRate(); ok {
			parts = append(parts, fmt.Sprintf("prefix-cache hit rate %s (%.0f of %.0f prompt tokens)", quantity(r, "fraction"), e.PrefixCache.Hits, e.PrefixCache.Queries))
		}
		for _, g := range []struct {
			name string
			g    *result.Gauge
			unit string
		}{{"KV-cache usage", e.KVCacheUsage, "fraction"}, {"requests running", e.Running, ""}, {"requests waiting", e.Waiting, ""}} {
			if g.g == nil {
				continue
			}
			if g.unit == "" {
				parts = append(parts, fmt.Sprintf("%s avg %.1f, max %.0f", g.name, g.g.Avg, g.g.Max))
			} else {
				parts = append(parts, fmt.Sprintf("%s avg %s, max %s", g.name, quantity(g.g.Avg, g.unit), quantity(g.g.Max, g.unit)))
			}
		}
		if len(parts) > 0 {
			fmt.Fprintf(w, "  Engine (%d readings): %s\n", e.Samples, strings.Join(parts, "; "))
		}
	}
}

// turnFigure draws TTFT p50 (and p95) against the turn index, one line per
// point of multi-turn sessions: flat when the server reuses the history
// it has cached, rising with the history when it prefills it again.
func turnFigure(run *result.Run) (figure, bool) {
	c := svg.XY{Title: "Time to first token by turn", XLabel: "turn of the conversation", YLabel: "TTFT (ms)", YFromZero: true, XInteger: true}
	n := 0
	for i := range run.Points {
		p := &run.Points[i]
		l := p.FigureMetrics().LLM
		if l == nil || len(l.Turns) == 0 {
			continue
		}
		p50 := svg.Series{Name: p.ID + " p50", Color: svg.Color(n), Shape: svg.ShapeOf(n)}
		p95 := svg.Series{Name: p.ID + " p95", Color: svg.Color(n), Shape: svg.ShapeOf(n), Dash: "4 3"}
		for _, t := range l.Turns {
			if !t.TTFT.Has() {
				continue
			}
			p50.Points = append(p50.Points, svg.Point{X: float64(t.Turn), Y: t.TTFT.P50Us / 1e3})
			p95.Points = append(p95.Points, svg.Point{X: float64(t.Turn), Y: t.TTFT.P95Us / 1e3, Hollow: true})
		}
		if len(p50.Points) == 0 {
			continue
		}
		c.Series = append(c.Series, p50, p95)
		n++
	}
	if n == 0 {
		return figure{}, false
	}
	return figure{ID: "turns", Heading: "Time to first token by turn",
		Caption: "Each line is one point of multi-turn sessions: every conversation's turn k together, its TTFT median (solid) and 95th percentile (dashed, hollow). Each turn sends the whole history again; a server that reuses its cached prefix keeps the line flat, one that prefills the history again climbs with it.",
		SVG:     html(c.Render(chartWidth, 380))}, true
}

// kvFigure draws the engine's KV-cache usage over each point's run, as
// scraped from its metrics endpoint.
func kvFigure(run *result.Run) (figure, bool) {
	c := svg.XY{Title: "KV-cache usage over the run", XLabel: "seconds from the point's first window", YLabel: "KV-cache usage (%)", YFromZero: true, XFromZero: true}
	n := 0
	for i := range run.Points {
		p := &run.Points[i]
		s := svg.Series{Name: p.ID, Color: svg.Color(n), Shape: svg.ShapeOf(n)}
		for _, e := range p.EngineSeries {
			if e.KVCacheUsage != nil {
				s.Points = append(s.Points, svg.Point{X: e.Offset, Y: *e.KVCacheUsage * 100})
			}
		}
		if len(s.Points) == 0 {
			continue
		}
		c.Series = append(c.Series, s)
		n++
	}
	if n == 0 {
		return figure{}, false
	}
	return figure{ID: "kv-cache", Heading: "KV-cache usage over the run",
		Caption: "The server engine's own KV-cache usage (vllm:kv_cache_usage_perc or its equivalent), as read from its metrics endpoint while each point ran, from the start of the point's first window (stabilization windows included).",
		SVG:     html(c.Render(chartWidth, 340))}, true
}

// waitPhrase says how a replay's sends waited for their instants; a
// "fair" wait names what would have made it precise.
func waitPhrase(wait string) string {
	switch wait {
	case result.ScheduleWaitRealtime:
		return "; sends waited on real-time threads"
	case result.ScheduleWaitShortSlice:
		return "; sends waited on ordinary threads with a short slice: real-time threads were not permitted (root or CAP_SYS_NICE)"
	case result.ScheduleWaitFair:
		return "; sends waited on ordinary threads: neither real-time threads (root or CAP_SYS_NICE) nor a short slice (Linux 6.12) was granted"
	}
	return ""
}
