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
// URL): the verdict, the comparisons and the baseline gate drawn as the
// ratios they were decided on, the checks, throughput against latency per
// model (LLM runs: TTFT and inter-token gaps too), every point's windows
// in order, the server-side latency breakdown and the points table.
func HTML(w io.Writer, run *result.Run, v *verdict.Verdict, opts Options) error {
	metric := opts.Percentile
	if metric == "" {
		metric = plan.MetricP95
	}
	page := htmlPage{Run: run, PointHeader: pointHeader, CheckHeader: checkHeader}
	if v != nil {
		page.Verdict = SummaryLine(v)
		page.VerdictClass = verdictClass(v)
		page.Notices = v.Notices
		for _, c := range v.Checks {
			page.Checks = append(page.Checks, htmlCheck{Row: rowOf(c).cells(), Status: string(c.Status), Message: c.Message, Warnings: c.Warnings})
		}
	}
	page.Points = pointRows(run)
	if rows := llmRows(run); rows != nil {
		page.LLMHeader, page.LLM = llmHeader, rows
	}
	if rows := workloadRows(run); rows != nil {
		page.WorkloadHeader, page.Workload = workloadHeader, rows
	}
	if rows := processRows(run); rows != nil {
		page.ProcessHeader, page.Process, page.ProcessAbout = processHeader, rows, run.Environment.Server.Process
	}
	if f, ok := comparisonFigure(v); ok {
		page.Headline = append(page.Headline, f)
	}
	if f, ok := baselineFigure(v); ok {
		page.Headline = append(page.Headline, f)
	}
	metrics := []string{metric}
	if llmRows(run) != nil {
		// LLM runs: time to first token and inter-token gaps against
		// throughput, the curves a serving regression moves.
		metrics = append(metrics, plan.MetricTTFTP95, plan.MetricITLP95)
	}
	for _, m := range metrics {
		f, ok, err := latencyFigure(run, v, m)
		if err != nil {
			return fmt.Errorf("html report: %w", err)
		}
		if ok {
			page.Plots = append(page.Plots, f)
		}
	}
	for _, f := range []func(*result.Run) (figure, bool){turnFigure, kvFigure} {
		if fig, ok := f(run); ok {
			page.Plots = append(page.Plots, fig)
		}
	}
	page.Windows = windowFigures(run)
	if f, ok := breakdownFigure(run); ok {
		page.Plots = append(page.Plots, f)
	}
	var buf bytes.Buffer
	if err := htmlTmpl.Execute(&buf, page); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// verdictClass colours the verdict line by the run's outcome.
func verdictClass(v *verdict.Verdict) string {
	switch v.Outcome() {
	case verdict.OutcomePass:
		if len(v.NotGated()) > 0 {
			// A pass with checks that could not see their change is not
			// the green of a gated pass.
			return "undecided"
		}
		return "pass"
	case verdict.OutcomeInconclusive, verdict.OutcomeInterrupted:
		return "undecided"
	}
	return "fail"
}

type htmlPage struct {
	Run          *result.Run
	Verdict      string
	VerdictClass string
	Notices      []string
	CheckHeader  []string
	Checks       []htmlCheck
	PointHeader  []string
	Points       [][]string
	LLMHeader    []string
	LLM          [][]string
	// WorkloadHeader and Workload are the turn, engine and schedule table.
	WorkloadHeader []string
	Workload       [][]string
	// ProcessHeader and Process are the server process table, with what
	// it was read from.
	ProcessHeader []string
	Process       [][]string
	ProcessAbout  string
	Headline      []figure
	Plots         []figure
	Windows       []figure
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
body{font-family:system-ui,-apple-system,"Segoe UI","DejaVu Sans",Verdana,sans-serif;margin:2rem;color:#1b1f24;max-width:1200px}
h1{font-size:1.4rem}h2{font-size:1.15rem;margin-top:2rem}
.verdict{font-weight:bold;padding:.6rem 1rem;border-radius:6px;display:inline-block}
.pass{background:#dafbe1;color:#116329}.fail{background:#ffebe9;color:#a40e26}.undecided{background:#fff8c5;color:#7d4e00}
table{border-collapse:collapse;font-size:.85rem;margin:.5rem 0}
th,td{border:1px solid #d0d7de;padding:.25rem .5rem;text-align:left;white-space:nowrap}
th{background:#f6f8fa}
table.checks td:nth-child(3),table.checks td:nth-child(4),table.checks td:nth-child(11){white-space:normal;min-width:6em}
tr.s-fail td{background:#fff5f5}tr.s-warn td{background:#fffbdd}tr.s-inconclusive td{background:#fff8c5}tr.s-skip td{color:#6e7781}tr.s-not_gated td{background:#fff8c5}
.meta{color:#57606a;font-size:.85rem}
.msg{color:#57606a;font-size:.8rem;white-space:normal}
figure{margin:1rem 0}figcaption{color:#57606a;font-size:.85rem;max-width:1100px;margin:.3rem 0 .6rem}
svg{max-width:100%;height:auto;display:block}
</style>
</head>
<body>
<h1>perfscen: {{.Run.Scenario}}</h1>
<p class="meta">source {{.Run.Source}} · status {{.Run.Status}}{{with .Run.Environment.Testbed}} · testbed {{.}}{{end}}{{with .Run.Environment.Server.Version}} · server {{.}}{{end}}{{if not .Run.Started.IsZero}} · started {{.Run.Started.UTC.Format "2006-01-02 15:04:05 UTC"}}{{end}}</p>{{range .Run.Environment.Servers}}
<p class="meta">server {{.Key}}: {{serverText .}}</p>{{end}}
{{range .Run.Errors}}<p class="verdict fail">run error: {{.}}</p>{{end}}
{{if .Verdict}}<p class="verdict {{.VerdictClass}}">{{.Verdict}}</p>{{end}}
{{range .Notices}}<p class="meta">{{.}}</p>{{end}}
{{range .Headline}}<h2 id="{{.ID}}">{{.Heading}}</h2>
<figure>{{.SVG}}<figcaption>{{.Caption}}</figcaption></figure>
{{end}}{{if .Checks}}<h2>Checks</h2>
<table class="checks"><thead><tr>{{range .CheckHeader}}<th>{{.}}</th>{{end}}</tr></thead><tbody>
{{range .Checks}}<tr class="s-{{.Status}}">{{range .Row}}<td>{{.}}</td>{{end}}</tr>
{{if or .Message .Warnings}}{{$m := .Message}}<tr class="s-{{.Status}}"><td></td><td colspan="10" class="msg">{{$m}}{{range $i, $w := .Warnings}}{{if or $i $m}}<br>{{end}}warning: {{$w}}{{end}}</td></tr>{{end}}
{{end}}</tbody></table>{{end}}
{{range .Plots}}<h2 id="{{.ID}}">{{.Heading}}</h2>
<figure>{{.SVG}}<figcaption>{{.Caption}}</figcaption></figure>
{{end}}{{if .Windows}}<h2 id="windows">Per-window throughput and latency</h2>
<p class="meta">Every measured window of each point in order: hollow markers on the shaded ground are the windows before the kept trials (warm-up and stabilization), filled ones the kept trials the figures and checks use. A trend across the filled ones is drift.</p>
{{range .Windows}}<figure>{{.SVG}}</figure>
{{end}}{{end}}{{if .LLM}}<h2>LLM</h2>
<table><thead><tr>{{range .LLMHeader}}<th>{{.}}</th>{{end}}</tr></thead><tbody>
{{range .LLM}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</tbody></table>{{end}}{{if .Workload}}<h2>LLM workload: by turn, the engine's figures, the schedule</h2>
<table><thead><tr>{{range .WorkloadHeader}}<th>{{.}}</th>{{end}}</tr></thead><tbody>
{{range .Workload}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</tbody></table>{{end}}{{if .Process}}<h2>Server process</h2>
{{with .ProcessAbout}}<p class="meta">{{.}}</p>{{end}}<table><thead><tr>{{range .ProcessHeader}}<th>{{.}}</th>{{end}}</tr></thead><tbody>
{{range .Process}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</tbody></table>{{end}}
{{if .Points}}<h2>Points</h2>
<table><thead><tr>{{range .PointHeader}}<th>{{.}}</th>{{end}}</tr></thead><tbody>
{{range .Points}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</tbody></table>{{end}}
</body>
</html>
`))
