package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// searchRun is a run of one search: a probe and the point of its answer.
func searchRun() *result.Run {
	v := 4.0
	probe := result.Point{ID: "delay/max_concurrency@p99<45ms/c=4", Model: "delay", Search: "max_concurrency@p99<45ms",
		Mode: plan.LoadConcurrency, Concurrency: 4, BatchSize: 1, Protocol: "http", Status: result.PointStable,
		Coords:  map[string]string{"concurrency": "4", "search": "max_concurrency@p99<45ms"},
		Summary: result.Metrics{Throughput: 100, Requests: 300, P99Us: 40000, P50Us: 40000, LatencyAvgUs: 40000}}
	found := result.Point{ID: "delay/max_concurrency@p99<45ms", Model: "delay", Status: result.PointSearched, Mode: plan.LoadConcurrency,
		BatchSize: 1, Protocol: "http", Coords: map[string]string{"search": "max_concurrency@p99<45ms"},
		Summary: result.Metrics{MaxConcurrency: &v},
		Searched: &result.SearchOutcome{Condition: "p99 < 45ms", Method: "binary", Decide: "interval", Start: 1, End: 16, Step: 1,
			Found: true, Value: 4, Failing: 5, Message: "concurrency 4 meets p99 < 45ms; 5 does not",
			Probes: []result.Probe{{Level: 4, Point: probe.ID, Outcome: "meets", Value: 40000, Lo: 39000, Hi: 41000, Confidence: 0.95, Trials: 6}}}}
	return &result.Run{Scenario: "s", Source: "perfscen", Status: result.StatusComplete, Points: []result.Point{probe, found}}
}

func TestConsoleShowsSearch(t *testing.T) {
	var b bytes.Buffer
	if err := Console(&b, searchRun(), nil, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Search: max_concurrency@p99<45ms (p99 < 45ms, binary search of concurrency in [1, 16] by 1; each probe judged on its median's interval)\n",
		"  Found: 4: concurrency 4 meets p99 < 45ms; 5 does not\n",
		"  Probe 4: meets (p99 40.00ms, 95% interval [39.00ms, 41.00ms], 6 trial(s))\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("console lacks %q:\n%s", want, b.String())
		}
	}
}

// perfscen run's CSV holds the sweep: neither a search's probes nor its
// answer are rows of it.
func TestCSVLeavesSearchesOut(t *testing.T) {
	run := searchRun()
	run.Points = append(run.Points, result.Point{ID: "delay/c=1", Model: "delay", Mode: plan.LoadConcurrency, Concurrency: 1,
		BatchSize: 1, Status: result.PointStable, Summary: result.Metrics{Throughput: 100, Requests: 100}})
	var b bytes.Buffer
	if err := CSV(&b, run, nil, Options{}); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(b.String()), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[1], "1,100,") {
		t.Errorf("CSV:\n%s", b.String())
	}
}
