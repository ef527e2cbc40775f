package report

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/verdict"
)

// TestJUnitParses reads the XML back with encoding/xml and holds it to
// the subset GitLab, GitHub reporters and Jenkins agree on.
func TestJUnitParses(t *testing.T) {
	run, v := fixture(t)
	var b bytes.Buffer
	if err := JUnit(&b, run, v, Options{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b.Bytes(), []byte(`<?xml version="1.0" encoding="UTF-8"?>`)) {
		t.Error("no XML declaration")
	}
	var doc struct {
		XMLName  xml.Name `xml:"testsuites"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Errors   int      `xml:"errors,attr"`
		Skipped  int      `xml:"skipped,attr"`
		Suites   []struct {
			Name      string `xml:"name,attr"`
			Tests     int    `xml:"tests,attr"`
			Failures  int    `xml:"failures,attr"`
			Errors    int    `xml:"errors,attr"`
			Skipped   int    `xml:"skipped,attr"`
			Time      string `xml:"time,attr"`
			Timestamp string `xml:"timestamp,attr"`
			Cases     []struct {
				Name      string `xml:"name,attr"`
				Classname string `xml:"classname,attr"`
				Failure   *struct {
					Message string `xml:"message,attr"`
					Body    string `xml:",chardata"`
				} `xml:"failure"`
				Error   *struct{} `xml:"error"`
				Skipped *struct{} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("junit does not parse: %v", err)
	}
	if len(doc.Suites) != 1 {
		t.Fatalf("%d testsuites, want 1", len(doc.Suites))
	}
	s := doc.Suites[0]
	var fails, errs, skips int
	names := map[string]bool{}
	for _, c := range s.Cases {
		if c.Name == "" || c.Classname == "" {
			t.Errorf("testcase without name or classname: %+v", c)
		}
		if names[c.Classname+"/"+c.Name] {
			t.Errorf("duplicate testcase %s %s", c.Classname, c.Name)
		}
		names[c.Classname+"/"+c.Name] = true
		if c.Failure != nil {
			fails++
			if strings.TrimSpace(c.Failure.Body) == "" || c.Failure.Message == "" {
				t.Errorf("failure of %s has no message or body", c.Name)
			}
		}
		if c.Error != nil {
			errs++
		}
		if c.Skipped != nil {
			skips++
		}
	}
	if len(s.Cases) != len(v.Checks) || s.Tests != len(v.Checks) || doc.Tests != s.Tests {
		t.Errorf("tests: suite %d, root %d, cases %d, checks %d", s.Tests, doc.Tests, len(s.Cases), len(v.Checks))
	}
	if s.Failures != fails || s.Errors != errs || s.Skipped != skips || doc.Failures != fails || doc.Errors != errs {
		t.Errorf("totals (f%d e%d s%d) do not match testcases (f%d e%d s%d)", s.Failures, s.Errors, s.Skipped, fails, errs, skips)
	}
	if fails != 2 || errs != 1 || skips != 1 {
		t.Errorf("fixture has 2 failures, 1 environment error and 1 skip; got %d, %d, %d", fails, errs, skips)
	}
	if s.Time != "282.500" || s.Timestamp != "2026-03-02T10:15:00" {
		t.Errorf("time %q timestamp %q", s.Time, s.Timestamp)
	}
	if s.Cases[1].Name != "p95 < 3ms @ onnx/c=4" || s.Cases[1].Classname != "threshold/onnx" {
		t.Errorf("case naming: %q %q", s.Cases[1].Name, s.Cases[1].Classname)
	}
}

func TestJUnitDuplicateNamesAndEmpty(t *testing.T) {
	run, _ := fixture(t)
	c := verdict.Check{Kind: verdict.KindThreshold, Name: "p99 < 1s", Point: "x", Status: verdict.StatusPass}
	var b bytes.Buffer
	if err := JUnit(&b, run, &verdict.Verdict{Checks: []verdict.Check{c, c}}, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `name="p99 &lt; 1s @ x (#2)"`) {
		t.Errorf("duplicate not renamed:\n%s", b.String())
	}
	b.Reset()
	if err := JUnit(&b, run, nil, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(b.Bytes(), new(struct{})); err != nil {
		t.Errorf("empty verdict: %v", err)
	}
}
