package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/perfscen/perfscen/internal/verdict"
	"github.com/perfscen/perfscen/runner/result"
)

// maxAnnotations is about what GitHub shows per step and kind; the rest
// are counted in one notice and left to the job summary.
const maxAnnotations = 10

// GitHub writes workflow commands: ::error per failed check, ::warning per
// warning, each titled by the check. Annotations do not fail a job; the
// exit code does.
func GitHub(w io.Writer, run *result.Run, v *verdict.Verdict, _ Options) error {
	if v == nil {
		return nil
	}
	bw := bufio.NewWriter(w)
	file := ""
	if run.ScenarioPath != "" {
		file = "file=" + escapeProperty(run.ScenarioPath) + ","
	}
	var errs, warns int
	for _, c := range v.Checks {
		if c.Status == verdict.StatusFail {
			if errs++; errs <= maxAnnotations {
				fmt.Fprintf(bw, "::error %stitle=%s::%s\n", file, escapeProperty("perfscen "+string(c.Kind)+": "+label(c)), escapeData(annotation(c)))
			}
		}
		// The warnings the console lists (checkWarnings), a warning
		// check's message with its figures; an undecided or not-gated
		// check is one warning more, saying why.
		var msgs []string
		if c.Status == verdict.StatusInconclusive || c.Status == verdict.StatusNotGated {
			msgs = append(msgs, annotation(c))
		}
		for _, w := range checkWarnings(c) {
			if c.Status == verdict.StatusWarn && w == c.Message {
				w = annotation(c)
			}
			msgs = append(msgs, w)
		}
		for _, m := range msgs {
			if warns++; warns <= maxAnnotations {
				fmt.Fprintf(bw, "::warning %stitle=%s::%s\n", file, escapeProperty("perfscen "+string(c.Kind)+": "+label(c)), escapeData(m))
			}
		}
	}
	if extra := max(errs-maxAnnotations, 0) + max(warns-maxAnnotations, 0); extra > 0 {
		fmt.Fprintf(bw, "::notice title=perfscen::%s\n", escapeData(fmt.Sprintf("%d more annotations not shown; see the job summary", extra)))
	}
	return bw.Flush()
}

// Annotate writes GitHub annotations only when running in GitHub Actions.
func Annotate(w io.Writer, getenv func(string) string, run *result.Run, v *verdict.Verdict) error {
	if getenv("GITHUB_ACTIONS") != "true" {
		return nil
	}
	return GitHub(w, run, v, Options{})
}

// annotation is the one-line text of a check: what was seen against what
// was required, with the statistics that back it.
func annotation(c verdict.Check) string {
	r := rowOf(c)
	parts := []string{}
	if r.Value != "" {
		parts = append(parts, "value "+r.Value)
	}
	if r.Bound != "" {
		parts = append(parts, "required "+r.Bound)
	}
	if r.Effect != "" {
		parts = append(parts, "effect "+r.Effect)
	}
	if r.Interval != "" {
		parts = append(parts, "interval "+r.Interval)
	}
	if r.P != "" {
		parts = append(parts, "p="+r.P)
	}
	s := strings.Join(parts, ", ")
	if c.Message != "" {
		if s != "" {
			return c.Message + " (" + s + ")"
		}
		return c.Message
	}
	return s
}

// Escaping as the actions toolkit does for command data and properties.
var (
	dataEscaper     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	propertyEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

func escapeData(s string) string     { return dataEscaper.Replace(s) }
func escapeProperty(s string) string { return propertyEscaper.Replace(s) }
