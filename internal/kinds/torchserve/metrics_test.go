package torchserve

import (
	"os"
	"testing"

	"github.com/perfscen/perfscen/internal/kinds"
)

// TorchServe 0.12's metrics text (its label sets end in ",}"): the two
// series of one model, /predictions/tiny and /predictions/tiny/1.0, are
// read apart, and a model that served nothing has zero counters.
func TestCountersOf(t *testing.T) {
	b, err := os.ReadFile("testdata/metrics.txt")
	if err != nil {
		t.Fatal(err)
	}
	fams, err := parseMetrics(b)
	if err != nil {
		t.Fatal(err)
	}
	if !hasCounters(fams) {
		t.Fatal("ts_inference_requests_total not found")
	}
	d := func(n, ns uint64) kinds.Duration { return kinds.Duration{Count: n, Ns: ns} }
	tests := []struct {
		model, version string
		want           kinds.Counters
	}{
		{"tiny", "default", kinds.Counters{Inferences: 16, Success: d(16, 4990070495), Queue: d(16, 4903070585), ComputeInfer: d(16, 86999910)}},
		{"tiny", "1.0", kinds.Counters{Inferences: 1, Success: d(1, 4893499), Queue: d(1, 289152), ComputeInfer: d(1, 4604347)}},
		{"other", "default", kinds.Counters{}},
	}
	for _, tt := range tests {
		if got := countersOf(fams, tt.model, tt.version); got != tt.want {
			t.Errorf("%s/%s: got %+v, want %+v", tt.model, tt.version, got, tt.want)
		}
	}
}

func TestParseMetricsRejectsGarbage(t *testing.T) {
	if _, err := parseMetrics([]byte("ts_inference_requests_total{model_name=\"x\" 1\n")); err == nil {
		t.Error("a broken label set parsed")
	}
	fams, err := parseMetrics([]byte("# TYPE other counter\nother 1\n"))
	if err != nil || hasCounters(fams) {
		t.Errorf("another server's metrics: %v %v", hasCounters(fams), err)
	}
}

// The embedded flavour's metrics text is read by the kind's own parser.
func TestFlavourMetricsText(t *testing.T) {
	s := newTSStats()
	s.prediction("simple", "default", 2500e3, 500e3)
	s.prediction("simple", "default", 1500e3, 0)
	s.prediction("simple", "1", 1000e3, 250e3)
	s.status(200)
	fams, err := parseMetrics([]byte(s.text()))
	if err != nil {
		t.Fatalf("%v\n%s", err, s.text())
	}
	got := countersOf(fams, "simple", "default")
	// 2.5 ms and 1.5 ms, 0.5 ms of it queued: counted in microseconds.
	want := kinds.Counters{Inferences: 2, Success: kinds.Duration{Count: 2, Ns: 4000e3}, Queue: kinds.Duration{Count: 2, Ns: 500e3},
		ComputeInfer: kinds.Duration{Count: 2, Ns: 3500e3}}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got := countersOf(fams, "simple", "1"); got.Inferences != 1 || got.Queue.Ns != 250e3 {
		t.Errorf("version series: %+v", got)
	}
}

func FuzzParseMetrics(f *testing.F) {
	b, _ := os.ReadFile("testdata/metrics.txt")
	f.Add(b)
	f.Add([]byte("ts_inference_requests_total{model_name=\"m\",model_version=\"default\",} NaN\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		fams, err := parseMetrics(in)
		if err != nil {
			return
		}
		c := countersOf(fams, "m", "default")
		if c.Queue.Ns > c.Success.Ns || c.ComputeInfer.Ns > c.Success.Ns {
			t.Errorf("queue or the rest exceed the request time: %+v", c)
		}
	})
}
