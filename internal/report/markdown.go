package report

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/perfscen/perfscen/internal/verdict"
	"github.com/perfscen/perfscen/runner/result"
)

// Markdown writes a GitHub-flavoured summary: the verdict line, the checks
// table and the points table. Plots are not inlined: job summaries only
// show images at reachable URLs.
func Markdown(w io.Writer, run *result.Run, v *verdict.Verdict, _ Options) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "## perfscen: %s\n\n", mdEscape(run.Scenario))
	for _, s := range run.Environment.Servers {
		fmt.Fprintf(&b, "- server **%s**: %s\n", mdEscape(s.Key), mdEscape(ServerText(s)))
	}
	if len(run.Environment.Servers) > 0 {
		b.WriteString("\n")
	}
	if v != nil {
		line := SummaryLine(v)
		verdictWord, rest := verdictParts(line)
		icon := "✅"
		switch {
		case verdictWord == "FAIL":
			icon = "❌"
		case verdictWord == "INCONCLUSIVE":
			icon = "❔"
		case verdictWord == "PASS" && len(v.NotGated()) > 0:
			icon = "⚠️"
		}
		fmt.Fprintf(&b, "%s **%s**%s\n\n", icon, verdictWord, mdEscape(rest))
		for _, n := range v.Notices {
			fmt.Fprintf(&b, "> %s\n", mdEscape(n))
		}
		if len(v.Notices) > 0 {
			b.WriteString("\n")
		}
		if len(v.Checks) > 0 {
			b.WriteString("### Checks\n\n")
			rows := make([][]string, len(v.Checks))
			for i, c := range v.Checks {
				r := rowOf(c)
				r.Status = statusIcon(c.Status) + " " + r.Status
				rows[i] = r.cells()
			}
			mdTable(&b, checkHeader, rows)
			b.WriteString("\n")
			details(&b, v.Checks)
		}
	}
	for _, e := range run.Errors {
		fmt.Fprintf(&b, "> **run error:** %s\n", mdEscape(e))
	}
	if len(run.Errors) > 0 {
		b.WriteString("\n")
	}
	if len(run.Points) > 0 {
		fmt.Fprintf(&b, "### Points (%s, %s)\n\n", mdEscape(run.Source), mdEscape(run.Status))
		if note := FiguresNote(run); note != "" {
			fmt.Fprintf(&b, "%s\n\n", mdEscape(note))
		}
		mdTable(&b, pointHeader, pointRows(run))
		if rows := llmRows(run); rows != nil {
			b.WriteString("\n### LLM\n\n")
			mdTable(&b, llmHeader, rows)
		}
		if rows := workloadRows(run); rows != nil {
			b.WriteString("\n### LLM workload: by turn, the engine's figures, the schedule\n\n")
			mdTable(&b, workloadHeader, rows)
		}
		if rows := processRows(run); rows != nil {
			b.WriteString("\n### Server process\n\n")
			if s := run.Environment.Server.Process; s != "" {
				fmt.Fprintf(&b, "%s\n\n", mdEscape(s))
			}
			mdTable(&b, processHeader, rows)
		}
	}
	if line := DisturbanceLine(run); line != "" {
		fmt.Fprintf(&b, "\n%s\n", mdEscape(line))
	}
	_, err := w.Write(b.Bytes())
	return err
}

func statusIcon(s verdict.Status) string {
	switch s {
	case verdict.StatusPass:
		return "✅"
	case verdict.StatusFail:
		return "❌"
	case verdict.StatusWarn:
		return "⚠️"
	case verdict.StatusInconclusive:
		return "❔"
	case verdict.StatusNotGated:
		return "🚫"
	}
	return "⏭️"
}

func mdTable(b *bytes.Buffer, header []string, rows [][]string) {
	b.WriteString("| " + strings.Join(escapeAll(header), " | ") + " |\n")
	b.WriteString("|" + strings.Repeat(" --- |", len(header)) + "\n")
	for _, r := range rows {
		b.WriteString("| " + strings.Join(escapeAll(r), " | ") + " |\n")
	}
}

func escapeAll(cells []string) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = mdEscape(c)
	}
	return out
}

// mdEscape keeps a value inside its table cell and out of Markdown syntax.
var mdReplacer = strings.NewReplacer("|", `\|`, "\r\n", " ", "\n", " ", "\r", " ", "<", "&lt;", ">", "&gt;", "*", `\*`, "_", `\_`, "`", "\\`")

func mdEscape(s string) string { return mdReplacer.Replace(s) }

// StepSummaryLimit is GitHub's cap on one step's summary; a larger one is
// dropped entirely, so the summary is cut to fit.
const StepSummaryLimit = 1 << 20

// AppendStepSummary appends md to the file named by $GITHUB_STEP_SUMMARY;
// without that variable it does nothing. getenv is os.Getenv in the CLI.
func AppendStepSummary(getenv func(string) string, md []byte) error {
	path := getenv("GITHUB_STEP_SUMMARY")
	if path == "" {
		return nil
	}
	md = fitSummary(md, StepSummaryLimit)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("writing GitHub step summary: %w", err)
	}
	if _, err := f.Write(md); err != nil {
		f.Close()
		return fmt.Errorf("writing GitHub step summary %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing GitHub step summary %s: %w", path, err)
	}
	return nil
}

// fitSummary cuts md at a line boundary so that it and a closing note fit
// in limit bytes.
func fitSummary(md []byte, limit int) []byte {
	if len(md) <= limit {
		return md
	}
	const note = "\n_Summary truncated to fit GitHub's 1 MiB limit; see the JSON or HTML report._\n"
	cut := md[:limit-len(note)]
	if i := bytes.LastIndexByte(cut, '\n'); i >= 0 {
		cut = cut[:i+1]
	}
	return append(append([]byte{}, cut...), note...)
}

// StepSummary renders the Markdown summary and appends it to
// $GITHUB_STEP_SUMMARY when set.
func StepSummary(getenv func(string) string, run *result.Run, v *verdict.Verdict) error {
	if getenv("GITHUB_STEP_SUMMARY") == "" {
		return nil
	}
	var b bytes.Buffer
	if err := Markdown(&b, run, v, Options{}); err != nil {
		return err
	}
	return AppendStepSummary(getenv, b.Bytes())
}

// details lists why each failed, undecided or warning check is so, first
// error messages included, and every warning the summary line counts: the
// table has no room for them.
func details(b *bytes.Buffer, checks []verdict.Check) {
	n := 0
	for _, c := range checks {
		why := c.Message != "" && (c.Status == verdict.StatusFail || c.Status == verdict.StatusInconclusive || c.Status == verdict.StatusNotGated)
		warns := checkWarnings(c)
		if !why && len(warns) == 0 {
			continue
		}
		if n == 0 {
			b.WriteString("<details><summary>Why</summary>\n\n")
		}
		n++
		where := c.Point
		if where == "" {
			where = c.Model
		}
		fmt.Fprintf(b, "- %s **%s**", statusIcon(c.Status), mdEscape(c.Name))
		if where != "" {
			fmt.Fprintf(b, " @ %s", mdEscape(where))
		}
		if why {
			fmt.Fprintf(b, ": %s", mdEscape(c.Message))
		}
		b.WriteString("\n")
		for _, w := range warns {
			if w == "" {
				b.WriteString("  - warning\n")
				continue
			}
			fmt.Fprintf(b, "  - warning: %s\n", mdEscape(w))
		}
	}
	if n > 0 {
		b.WriteString("\n</details>\n\n")
	}
}

// verdictParts splits a summary line after its outcome word(s): "FAIL",
// "COULD NOT MEASURE", "PASS" (whose rest may start " — 2 checks not
// gated …"), keeping the rest as written.
func verdictParts(line string) (word, rest string) {
	i := strings.IndexAny(line, ":—")
	if i < 0 {
		return line, ""
	}
	return strings.TrimSpace(line[:i]), line[len(strings.TrimRight(line[:i], " ")):]
}
