package report

import (
	"encoding/xml"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/verdict"
)

// A check that was not gated never reads as a plain pass: the summary
// line, JUnit (skipped, with the reason), the Markdown, the step summary
// and the HTML all say so, and they agree with each other.
func TestNotGatedInEveryReport(t *testing.T) {
	run, _ := fixture(t)
	ng := verdict.Check{Kind: verdict.KindBaseline, Name: "throughput vs baseline", Point: "simple/c=1", Metric: "throughput",
		Status: verdict.StatusNotGated, MDE: 0.66, Target: 0.2,
		Message: "not gated: testbed noise hides changes under 66% (the check is meant to catch 20%); -3.2% vs history of 7 run(s)"}
	v := &verdict.Verdict{Checks: []verdict.Check{
		{Kind: verdict.KindThreshold, Name: "errors == 0", Point: "simple/c=1", Status: verdict.StatusPass},
		ng,
	}}
	line := SummaryLine(v)
	want := "PASS — 1 check not gated (throughput vs baseline @ simple/c=1: testbed noise hides changes under 66% (the check is meant to catch 20%)): 1 check passed"
	if line != want {
		t.Fatalf("summary\n got %q\nwant %q", line, want)
	}

	var doc struct {
		Skipped int `xml:"skipped,attr"`
		Suites  []struct {
			Cases []struct {
				Name    string `xml:"name,attr"`
				Skipped *struct {
					Message string `xml:"message,attr"`
				} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(render(t, "junit", run, v, Options{}), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Skipped != 1 || doc.Suites[0].Cases[1].Skipped == nil || !strings.Contains(doc.Suites[0].Cases[1].Skipped.Message, "hides changes under 66%") {
		t.Errorf("junit: not-gated check not skipped with its reason: %+v", doc)
	}

	md := string(render(t, "markdown", run, v, Options{}))
	if !strings.Contains(md, "⚠️ **PASS** — 1 check not gated") || !strings.Contains(md, "🚫 not gated") {
		t.Errorf("markdown does not show the check as not gated:\n%s", md)
	}
	html := string(render(t, "html", run, v, Options{}))
	if !strings.Contains(html, `class="verdict undecided"`) || !strings.Contains(html, `class="s-not_gated"`) {
		t.Errorf("html does not show the check as not gated")
	}
	con := string(render(t, "console", run, v, Options{}))
	if !strings.Contains(con, line) {
		t.Errorf("console summary differs from the summary line")
	}

	// With gate.require_gated the same run is inconclusive, and says why.
	v.RequireGated = true
	if got := SummaryLine(v); !strings.HasPrefix(got, "INCONCLUSIVE: 1 of 2 checks not gated (gate.require_gated): throughput vs baseline") {
		t.Errorf("strict summary %q", got)
	}
}
