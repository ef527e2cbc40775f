package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/perfscen/perfscen/runner/result"
)

// A point that could not be measured prints no throughput or latency,
// even with trials recorded before its server went away (a result written
// by an older build), and quotes the dominant class of its failures.
func TestConsoleFailedPointHasNoFigures(t *testing.T) {
	met := result.Metrics{Requests: 1000, Throughput: 157, LatencyAvgUs: 6000, P50Us: 5900, Errors: 444062}
	run := &result.Run{Scenario: "s", Status: result.StatusPartial, Points: []result.Point{{
		ID: "c8", Model: "m", ModelName: "m", Protocol: "http", BatchSize: 1, Mode: "concurrency", Concurrency: 8,
		Status:  result.PointFailed,
		Summary: met,
		Trials:  []result.Trial{{Duration: time.Second, Metrics: met}},
		Errors: result.ErrorInfo{Count: 444062, First: []string{"http infer: server returned 500: shutting down"},
			Classes: []result.ErrorClass{{Class: "connection refused", Count: 444000}, {Class: "HTTP 500", Count: 62}}},
		Notes: []string{"server unreachable: no reply for 5s"},
	}}}
	var b bytes.Buffer
	if err := Console(&b, run, nil, Options{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, bad := range []string{"Throughput:", "157", "latency:", "5900"} {
		if strings.Contains(out, bad) {
			t.Errorf("a failed point's report shows %q:\n%s", bad, out)
		}
	}
	for _, want := range []string{"No measurement (failed)", "Errors: 444062; mostly connection refused (444000 of 444062)"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}
