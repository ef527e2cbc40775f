package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"

	"github.com/perfscen/perfscen/internal/verdict"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// HTML writes one self-contained page (inline CSS, inline SVG, no external
// URL) with the verdict, the checks, the points and two plots: throughput
// vs latency per model (with the baseline gate's band: its left edge is
// the bound a point's throughput must not fall below) and the server-side
// latency breakdown per point.
func HTML(w io.Writer, run *result.Run, v *verdict.Verdict, opts Options) error {
	metric := opts.Percentile
	if metric == "" {
		metric = plan.MetricP95
	}
	page := htmlPage{Run: run, PointHeader: pointHeader, CheckHeader: checkHeader}
	if v != nil {
		page.Verdict = SummaryLine(v)
		page.Failed = len(v.Failed()) > 0
		page.NotGated = len(v.NotGated()) > 0
		page.Notices = v.Notices
		for _, c := range v.Checks {
			page.Checks = append(page.Checks, htmlCheck{Row: rowOf(c).cells(), Status: string(c.Status), Message: c.Message, Warnings: c.Warnings})
		}
	}
	page.Points = pointRows(run)
	if rows := llmRows(run); rows != nil {
		page.LLMHeader, page.LLM = llmHeader, rows
	}
	lat, ok, err := latencyPlot(run, metric, gateBands(v))
	if err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	if ok {
		page.Plots = append(page.Plots, template.HTML(lat)) // #nosec: produced by gonum's SVG backend from numbers and escaped labels
	}
	// LLM runs: time to first token and inter-token gaps against
	// throughput, the curves a serving regression moves.
	if llmRows(run) != nil {
		for _, m := range []string{plan.MetricTTFTP95, plan.MetricITLP95} {
			svg, ok, err := latencyPlot(run, m, nil)
			if err != nil {
				return fmt.Errorf("html report: %w", err)
			}
			if ok {
				page.Plots = append(page.Plots, template.HTML(svg)) // #nosec: gonum SVG from numbers and escaped labels
			}
		}
	}
	br, ok, err := breakdownPlot(run)
	if err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	if ok {
		page.Plots = append(page.Plots, template.HTML(br))
	}
	var buf bytes.Buffer
	if err := htmlTmpl.Execute(&buf, page); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	_, err = w.Write(buf.Bytes())
	return err
}

type htmlPage struct {
	Run         *result.Run
	Verdict     string
	Failed      bool
	NotGated    bool
	Notices     []string
	CheckHeader []string
	Checks      []htmlCheck
	PointHeader []string
	Points      [][]string
	LLMHeader   []string
	LLM         [][]string
	Plots       []template.HTML
}

type htmlCheck struct {
	Row      []string
	Status   string
	Message  string
	Warnings []string
}

var htmlTmpl = template.Must(template.New("report").Funcs(template.FuncMap{"serverText": ServerText}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>perfscen: {{.Run.Scenario}}</title>
<style>
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem;color:#1b1f24;max-width:1400px}
h1{font-size:1.4rem}h2{font-size:1.15rem;margin-top:2rem}
.verdict{font-weight:bold;padding:.6rem 1rem;border-radius:6px;display:inline-block}
.pass{background:#dafbe1;color:#116329}.fail{background:#ffebe9;color:#a40e26}.notgated{background:#fff8c5;color:#7d4e00}
table{border-collapse:collapse;font-size:.85rem;margin:.5rem 0}
th,td{border:1px solid #d0d7de;padding:.25rem .5rem;text-align:left;white-space:nowrap}
th{background:#f6f8fa}
tr.s-fail td{background:#fff5f5}tr.s-warn td{background:#fffbdd}tr.s-skip td{color:#6e7781}tr.s-not_gated td{background:#fff8c5}
.meta{color:#57606a;font-size:.85rem}
.msg{color:#57606a;font-size:.8rem;white-space:normal}
figure{margin:1rem 0}svg{max-width:100%;height:auto}
</style>
</head>
<body>
<h1>perfscen: {{.Run.Scenario}}</h1>
<p class="meta">source {{.Run.Source}} · status {{.Run.Status}}{{with .Run.Environment.Testbed}} · testbed {{.}}{{end}}{{with .Run.Environment.Server.Version}} · server {{.}}{{end}}{{if not .Run.Started.IsZero}} · started {{.Run.Started.UTC.Format "2006-01-02 15:04:05 UTC"}}{{end}}</p>{{range .Run.Environment.Servers}}
<p class="meta">server {{.Key}}: {{serverText .}}</p>{{end}}
{{range .Run.Errors}}<p class="verdict fail">run error: {{.}}</p>{{end}}
{{if .Verdict}}<p class="verdict {{if .Failed}}fail{{else if .NotGated}}notgated{{else}}pass{{end}}">{{.Verdict}}</p>{{end}}
{{range .Notices}}<p class="meta">{{.}}</p>{{end}}
{{if .Checks}}<h2>Checks</h2>
<table><thead><tr>{{range .CheckHeader}}<th>{{.}}</th>{{end}}</tr></thead><tbody>
{{range .Checks}}<tr class="s-{{.Status}}">{{range .Row}}<td>{{.}}</td>{{end}}</tr>
{{if or .Message .Warnings}}<tr class="s-{{.Status}}"><td></td><td colspan="10" class="msg">{{.Message}}{{range .Warnings}}<br>warning: {{.}}{{end}}</td></tr>{{end}}
{{end}}</tbody></table>{{end}}
{{if .Plots}}<h2>Plots</h2>{{range .Plots}}<figure>{{.}}</figure>{{end}}{{end}}
{{if .LLM}}<h2>LLM</h2>
<table><thead><tr>{{range .LLMHeader}}<th>{{.}}</th>{{end}}</tr></thead><tbody>
{{range .LLM}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</tbody></table>{{end}}
{{if .Points}}<h2>Points</h2>
<table><thead><tr>{{range .PointHeader}}<th>{{.}}</th>{{end}}</tr></thead><tbody>
{{range .Points}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</tbody></table>{{end}}
</body>
</html>
`))
