package history

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/perfscen/perfscen/internal/baseline"
	"github.com/perfscen/perfscen/internal/report/svg"
	"github.com/perfscen/perfscen/runner/plan"
)

// Method says how change points are found, for both renderings.
const Method = "Runs in the order they started. Change points: E-divisive with means (Matteson & James 2014, as Hunter/Otava use it), " +
	"binary segmentation, at least 3 runs either side, kept when p ≤ 0.01 against 199 seeded series of AR(1) noise fitted to the runs " +
	"(a sieve bootstrap, so that drifting runs are not taken for a change). " +
	"Band: the baseline's center ×/÷ (1 + MDE), the smallest change its history detects; an MDE of 100% or more gates nothing."

// changeAt is the change of the mean at run i, as text ("+45.0% from
// here, worse"): worse or better by the metric's direction, so that a
// slowdown reads as one whether the figure is a latency or a rate.
func (s *Series) changeAt(i int, bold bool) (string, bool) {
	for _, c := range s.Changes {
		if c.Index != i {
			continue
		}
		d := c.After/c.Before - 1
		pct := fmt.Sprintf("%+.1f%%", 100*d)
		if bold {
			pct = "**" + pct + "**"
		}
		text := pct + " from here"
		if mi, ok := plan.LookupMetric(s.Metric); ok && d != 0 {
			if (d > 0) == mi.HigherBetter {
				text += ", better"
			} else {
				text += ", worse"
			}
		}
		return text, true
	}
	return "", false
}

func failedCount(s *Series) int {
	n := 0
	for _, e := range s.Entries {
		if e.Failed {
			n++
		}
	}
	return n
}

func date(t time.Time) string { return t.UTC().Format("2006-01-02 15:04") }

// Markdown writes the report as GitHub-flavoured Markdown: per series a
// line with the band and the changes, and a table of runs.
func Markdown(w io.Writer, r Report) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# History of %s\n\n%s\n", r.Scenario, Method)
	for _, s := range r.Skipped {
		fmt.Fprintf(&b, "\n- skipped %s", s)
	}
	if len(r.Skipped) > 0 {
		b.WriteString("\n")
	}
	tb := ""
	for i := range r.Series {
		s := &r.Series[i]
		if s.Testbed != tb {
			tb = s.Testbed
			fmt.Fprintf(&b, "\n## testbed %s\n", tb)
		}
		fmt.Fprintf(&b, "\n### %s · %s\n\n", s.Point, s.Metric)
		band := "band: none (fewer than 2 baseline runs)"
		if s.HasBand {
			band = bandText(s)
		}
		fmt.Fprintf(&b, "%d run(s), %d failed; %s; %d change point(s)\n\n", len(s.Entries), failedCount(s), band, len(s.Changes))
		b.WriteString("| # | started | run | version | value | gate | change |\n|---:|---|---|---|---:|---|---|\n")
		for j, e := range s.Entries {
			gate, change := "", ""
			if e.Failed {
				gate = "**FAIL**"
			}
			if c, ok := s.changeAt(j, true); ok {
				change = c
			}
			fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s |\n", j+1, date(e.When()), orDash(e.RunID), orDash(e.Version),
				baseline.FormatValue(s.Metric, e.Value), gate, change)
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

func bandText(s *Series) string {
	t := fmt.Sprintf("band: %s (%s – %s, MDE %.0f%%)", baseline.FormatValue(s.Metric, s.Center),
		baseline.FormatValue(s.Metric, s.Lo), baseline.FormatValue(s.Metric, s.Hi), 100*s.MDE)
	if s.MDE >= 1 {
		t += ", not gated"
	}
	return t
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return strings.ReplaceAll(s, "|", "\\|")
}

// Chart draws one series: the runs in order, the band as dashed rules,
// failed runs as red hollow markers and each change as a vertical rule.
func Chart(s *Series) []byte {
	// Latencies are recorded in µs and read in ms; rates keep their unit.
	mi, _ := plan.LookupMetric(s.Metric)
	scale, unit := 1.0, mi.Unit
	if unit == "us" {
		scale, unit = 1e-3, "ms"
	}
	ylabel := s.Metric
	if unit != "" && unit != "count" && unit != "fraction" {
		ylabel += " (" + unit + ")"
	}
	ok := svg.Series{Name: s.Metric, Color: svg.Color(0), Shape: svg.ShapeOf(0)}
	bad := svg.Series{Name: "gate failed", Color: "#c62828", Shape: svg.ShapeOf(1), NoLine: true}
	for i, e := range s.Entries {
		p := svg.Point{X: float64(i + 1), Y: e.Value * scale}
		ok.Points = append(ok.Points, p)
		if e.Failed {
			p.Hollow = true
			bad.Points = append(bad.Points, p)
		}
	}
	c := &svg.XY{
		Title: s.Point + " · " + s.Metric, XLabel: "run (oldest first)", YLabel: ylabel,
		Series: []svg.Series{ok}, XInteger: true,
	}
	if len(bad.Points) > 0 {
		c.Series = append(c.Series, bad)
	}
	switch {
	case s.HasBand && s.MDE < 1:
		band := svg.Stroke{Color: "#757575", Width: 1, Dash: "4 3"}
		c.Rules = append(c.Rules, svg.Rule{Value: s.Lo * scale, Horizontal: true, Stroke: band}, svg.Rule{Value: s.Hi * scale, Horizontal: true, Stroke: band},
			svg.Rule{Value: s.Center * scale, Horizontal: true, Stroke: svg.Stroke{Color: "#757575", Width: 1}})
		c.Legend = append(c.Legend, svg.LegendItem{Text: "baseline band (×/÷ 1+MDE)", Stroke: band})
	case s.HasBand:
		// A band of 100% or more would flatten the series; the center alone
		// says where the history sits.
		center := svg.Stroke{Color: "#757575", Width: 1}
		c.Rules = append(c.Rules, svg.Rule{Value: s.Center * scale, Horizontal: true, Stroke: center})
		c.Legend = append(c.Legend, svg.LegendItem{Text: "baseline center (not gated)", Stroke: center})
	}
	if len(s.Changes) > 0 {
		cp := svg.Stroke{Color: "#ef6c00", Width: 2}
		for _, ch := range s.Changes {
			// Between the last run of the old level and the first of the new.
			c.Rules = append(c.Rules, svg.Rule{Value: float64(ch.Index) + 0.5, Stroke: cp})
		}
		c.Legend = append(c.Legend, svg.LegendItem{Text: "change point", Stroke: cp})
	}
	return c.Render(720, 260)
}

var page = template.Must(template.New("history").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>History of {{.Scenario}}</title>
<style>
body{font-family:system-ui,sans-serif;margin:24px;color:#212121;max-width:1100px}
h1{font-size:22px}h2{font-size:18px;margin-top:32px}h3{font-size:15px}
table{border-collapse:collapse;font-size:13px;margin:8px 0 24px}
th,td{border:1px solid #e0e0e0;padding:3px 8px;text-align:left}td.num{text-align:right}
tr.fail td{background:#ffebee}tr.change td{border-top:3px solid #ef6c00}
p.method{color:#616161;font-size:13px}summary{cursor:pointer;font-size:13px;color:#424242}
</style></head><body>
<h1>History of {{.Scenario}}</h1>
<p class="method">{{.Method}}</p>
{{range .Skipped}}<p class="skipped">skipped {{.}}</p>{{end}}
{{range .Series}}{{if .Testbed}}<h2>testbed {{.Testbed}}</h2>{{end}}
<section class="series" data-point="{{.Point}}" data-metric="{{.Metric}}">
<h3>{{.Point}} · {{.Metric}}</h3>
<p>{{.Line}}</p>
<figure>{{.SVG}}</figure>
<details{{if .Open}} open{{end}}><summary>{{len .Rows}} run(s)</summary>
<table><tr><th>#</th><th>started</th><th>run</th><th>version</th><th>value</th><th>gate</th><th>change</th></tr>
{{range .Rows}}<tr class="{{.Class}}"><td class="num">{{.N}}</td><td>{{.Date}}</td><td>{{.Run}}</td><td>{{.Version}}</td><td class="num">{{.Value}}</td><td>{{.Gate}}</td><td>{{.Change}}</td></tr>
{{end}}</table></details></section>
{{end}}</body></html>
`))

type htmlRow struct {
	Class, Date, Run, Version, Value, Gate, Change string
	N                                              int
}

type htmlSeries struct {
	Testbed, Point, Metric, Line string
	SVG                          template.HTML
	Rows                         []htmlRow
	// Open unfolds the table of a series that failed or changed.
	Open bool
}

// HTML writes one self-contained page (inline CSS and SVG, no external
// URL) with a chart and a table per series.
func HTML(w io.Writer, r Report) error {
	data := struct {
		Scenario, Method string
		Skipped          []string
		Series           []htmlSeries
	}{Scenario: r.Scenario, Method: Method, Skipped: r.Skipped}
	tb := ""
	for i := range r.Series {
		s := &r.Series[i]
		hs := htmlSeries{Point: s.Point, Metric: s.Metric,
			SVG: template.HTML(Chart(s))} // #nosec G203: drawn by internal/report/svg, every text escaped
		if s.Testbed != tb {
			tb, hs.Testbed = s.Testbed, s.Testbed
		}
		hs.Line = fmt.Sprintf("%d run(s), %d failed, %d change point(s)", len(s.Entries), failedCount(s), len(s.Changes))
		if s.HasBand {
			hs.Line += "; " + bandText(s)
		}
		for j, e := range s.Entries {
			row := htmlRow{N: j + 1, Date: date(e.When()), Run: e.RunID, Version: e.Version, Value: baseline.FormatValue(s.Metric, e.Value)}
			if e.Failed {
				row.Class, row.Gate = "fail", "FAIL"
			}
			if c, ok := s.changeAt(j, false); ok {
				row.Class = strings.TrimSpace(row.Class + " change")
				row.Change = c
			}
			hs.Rows = append(hs.Rows, row)
		}
		hs.Open = failedCount(s) > 0 || len(s.Changes) > 0
		data.Series = append(data.Series, hs)
	}
	return page.Execute(w, data)
}
