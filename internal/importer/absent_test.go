package importer

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/runner/plan"
)

// A plain perf_analyzer CSV (no --verbose-csv) carries no average
// latency, response wait or request count: those figures are absent
// (and said to be), never 0; every column the file has is kept.
func TestCSVFiguresNotCarriedAreAbsent(t *testing.T) {
	f, err := os.Open("testdata/default.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pts, err := ParseCSV("default.csv", f, Options{Model: "simple"})
	if err != nil {
		t.Fatal(err)
	}
	p := pts[0]
	for _, key := range []string{"latency_avg_us", "client_wait_us", "requests"} {
		if !slices.Contains(p.Summary.Absent, key) {
			t.Errorf("%s not marked absent: %v", key, p.Summary.Absent)
		}
	}
	for _, m := range []string{plan.MetricLatencyAvg, plan.MetricClientWait} {
		if v, ok := p.Summary.Value(m); ok {
			t.Errorf("%s has a value (%g) the file does not carry", m, v)
		}
	}
	if _, ok := p.Summary.Value(plan.MetricP99); !ok {
		t.Error("p99, which the file carries, has no value")
	}
	b, err := json.Marshal(p.Summary)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"latency_avg_us"`, `"client_wait_us"`, `"requests"`} {
		if strings.Contains(string(b), key+":") {
			t.Errorf("JSON carries %s: %s", key, b)
		}
	}
	if _, ok := p.Columns["Network+Server Send/Recv"]; !ok {
		t.Errorf("column Network+Server Send/Recv dropped: %v", p.Columns)
	}
	if !strings.Contains(strings.Join(p.Notes, "\n"), "absent (not 0)") {
		t.Errorf("notes do not say what is absent: %q", p.Notes)
	}
}
