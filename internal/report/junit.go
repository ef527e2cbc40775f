package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/perfscen/perfscen/internal/verdict"
	"github.com/perfscen/perfscen/runner/result"
)

// JUnit XML as GitLab, GitHub test reporters and Jenkins read it: one
// testsuite per run, one testcase per check.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Hostname   string          `xml:"hostname,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
	SystemOut  string          `xml:"system-out,omitempty"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	File      string        `xml:"file,attr,omitempty"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Body    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr,omitempty"`
}

// JUnit writes one testcase per check: classname kind/model, name
// "check @ point"; failures carry the verdict line in the body (GitLab
// shows the body, not the message attribute); environment failures
// (unstable or failed points) are <error>s; skipped checks are <skipped/>.
func JUnit(w io.Writer, run *result.Run, v *verdict.Verdict, _ Options) error {
	suite := junitSuite{
		Name:      run.Scenario,
		Time:      seconds(run),
		Timestamp: timestamp(run),
		Hostname:  run.Environment.Host,
	}
	for _, p := range []junitProperty{
		{"source", run.Source}, {"status", run.Status}, {"testbed", run.Environment.Testbed},
		{"scenario_path", run.ScenarioPath}, {"perfscen_version", run.Environment.PerfscenVersion},
	} {
		if p.Value != "" {
			suite.Properties = append(suite.Properties, p)
		}
	}
	suite.Properties = append(suite.Properties, llmProperties(run)...)
	var notes []string
	if v != nil {
		notes = v.Notices
		seen := map[string]int{}
		for _, c := range v.Checks {
			tc := junitCase{Name: label(c), Classname: classname(c), Time: "0", File: run.ScenarioPath}
			// GitLab keeps only the first of duplicate names.
			if seen[tc.Name]++; seen[tc.Name] > 1 {
				tc.Name = fmt.Sprintf("%s (#%d)", tc.Name, seen[tc.Name])
			}
			details := checkDetails(c)
			switch c.Status {
			case verdict.StatusFail:
				prob := &junitProblem{Message: failMessage(c), Type: string(c.Kind), Body: details}
				if c.Environment {
					tc.Error = prob
					suite.Errors++
				} else {
					tc.Failure = prob
					suite.Failures++
				}
			case verdict.StatusNotGated:
				// Not a pass: the check could not have seen the change it
				// exists for. Skipped, with the reason.
				tc.Skipped = &junitSkipped{Message: c.Message}
				suite.Skipped++
			case verdict.StatusSkip, verdict.StatusInconclusive:
				// JUnit has no "undecided": a skipped case with the reason
				// keeps it out of both the passes and the failures.
				tc.Skipped = &junitSkipped{Message: c.Message}
				suite.Skipped++
			default:
				tc.SystemOut = details
			}
			suite.Cases = append(suite.Cases, tc)
		}
	}
	suite.Tests = len(suite.Cases)
	suite.SystemOut = strings.Join(append(append([]string{}, run.Errors...), notes...), "\n")
	doc := junitSuites{
		Name: "perfscen", Tests: suite.Tests, Failures: suite.Failures, Errors: suite.Errors,
		Skipped: suite.Skipped, Time: suite.Time, Suites: []junitSuite{suite},
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("encoding junit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// llmProperties are the LLM figures of every point of an openai-kind run,
// named "<point>.<figure>" with the unit in the figure's name, so a CI
// system that keeps JUnit properties can chart them.
func llmProperties(run *result.Run) []junitProperty {
	var out []junitProperty
	for i := range run.Points {
		p := &run.Points[i]
		figs := p.FigureMetrics()
		l := figs.LLM
		if l == nil {
			continue
		}
		add := func(name, value string) {
			if value != "" {
				out = append(out, junitProperty{p.ID + "." + name, value})
			}
		}
		for _, d := range []struct {
			name string
			d    result.Distribution
		}{{"ttft", l.TTFT}, {"itl", l.ITL}, {"tpot", l.TPOT}} {
			if !d.d.Has() {
				continue
			}
			for _, s := range []struct {
				name string
				v    float64
			}{{"avg", d.d.AvgUs}, {"p50", d.d.P50Us}, {"p90", d.d.P90Us}, {"p95", d.d.P95Us}, {"p99", d.d.P99Us}} {
				add(d.name+"_"+s.name+"_us", usec(s.v))
			}
		}
		add("output_tokens_per_s", paFloat(l.OutputTokensPerSec))
		if l.Goodput != nil {
			add("goodput_per_s", paFloat(*l.Goodput))
		}
		add("output_tokens", strconv.FormatInt(l.OutputTokens, 10))
		add("input_tokens", strconv.FormatInt(l.InputTokens, 10))
		add("token_count_source", tokenSource(l))
		for _, t := range l.Turns {
			if t.TTFT.Has() {
				add("turn"+strconv.Itoa(t.Turn)+".ttft_p50_us", usec(t.TTFT.P50Us))
			}
		}
		if e := l.Engine; e != nil {
			if r, ok := e.PrefixCache.HitRate(); ok {
				add("prefix_cache_hit_rate", paFloat(r))
			}
			if e.KVCacheUsage != nil {
				add("kv_cache_usage_avg", paFloat(e.KVCacheUsage.Avg))
				add("kv_cache_usage_max", paFloat(e.KVCacheUsage.Max))
			}
		}
		if se := figs.ScheduleError; se != nil && se.Has() {
			add("schedule_error_p50_us", usec(se.P50Us))
			add("schedule_error_p99_us", usec(se.P99Us))
			if figs.ScheduleWait != "" {
				add("schedule_wait", figs.ScheduleWait)
			}
		}
	}
	return out
}

func classname(c verdict.Check) string {
	if c.Model != "" {
		return string(c.Kind) + "/" + c.Model
	}
	return string(c.Kind)
}

func failMessage(c verdict.Check) string {
	if c.Message != "" {
		return c.Message
	}
	return label(c) + " failed"
}

// checkDetails is the plain-text description of a check: the same cells
// as the checks table, one per line, then its message and warnings.
func checkDetails(c verdict.Check) string {
	r := rowOf(c)
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", strings.ToUpper(r.Status), label(c))
	for i, h := range checkHeader {
		if i < 4 {
			continue
		}
		if cell := r.cells()[i]; cell != "" {
			fmt.Fprintf(&b, "%s: %s\n", h, cell)
		}
	}
	if c.Method != "" {
		fmt.Fprintf(&b, "method: %s\n", c.Method)
	}
	if c.Class != "" {
		fmt.Fprintf(&b, "class: %s\n", c.Class)
	}
	if c.Message != "" {
		fmt.Fprintf(&b, "message: %s\n", c.Message)
	}
	for _, w := range c.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	return b.String()
}

func seconds(run *result.Run) string {
	if run.Started.IsZero() || run.Finished.Before(run.Started) {
		return "0"
	}
	return fmt.Sprintf("%.3f", run.Finished.Sub(run.Started).Seconds())
}

// timestamp uses the ISO 8601 form without zone that the Ant/Jenkins
// schema expects, in UTC.
func timestamp(run *result.Run) string {
	if run.Started.IsZero() {
		return ""
	}
	return run.Started.UTC().Format("2006-01-02T15:04:05")
}
