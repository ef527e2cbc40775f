package tfserving

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/kinds"
)

// TF Serving's exposition: successes and their time from the latency
// histogram of Predict at the point's entrypoint, failures from the
// non-OK request counts; other models, APIs and metrics are left alone.
func TestPromCounters(t *testing.T) {
	b, err := os.ReadFile("testdata/prometheus.txt")
	if err != nil {
		t.Fatal(err)
	}
	fams, err := parseProm(b)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		model, entrypoint string
		want              kinds.Counters
	}{
		{"half_plus_two", "GRPC", kinds.Counters{Success: kinds.Duration{Count: 8, Ns: 1460500}, Fail: kinds.Duration{Count: 4}}},
		{"half_plus_two", "REST", kinds.Counters{Success: kinds.Duration{Count: 3, Ns: 900000}, Fail: kinds.Duration{Count: 4}}},
		{"other", "GRPC", kinds.Counters{Fail: kinds.Duration{Count: 9}}},
		{"not_yet_asked", "GRPC", kinds.Counters{}},
	}
	for _, c := range cases {
		if got := promCounters(fams, c.model, c.entrypoint); got != c.want {
			t.Errorf("%s %s: %+v, want %+v", c.model, c.entrypoint, got, c.want)
		}
	}
}

// The flavour's own exposition reads back through the parser: what it
// counted is what perfscen reads.
func TestFlavourMetricsExposition(t *testing.T) {
	m := newFlavourMetrics()
	m.record("simple", "Predict", "GRPC", nil, 150_000)   // 150 µs
	m.record("simple", "Predict", "GRPC", nil, 2_000_000) // 2 ms
	m.record("simple", "Predict", "GRPC", &apiErr{code: 3}, 1)
	m.record("simple", "predict", "REST", nil, 1_000)
	var sb strings.Builder
	m.write(&sb)
	text := sb.String()
	if strings.Contains(text, "# HELP") || !strings.Contains(text, `# TYPE :tensorflow:serving:request_latency histogram`) {
		t.Errorf("exposition:\n%s", text)
	}
	fams, err := parseProm([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	got := promCounters(fams, "simple", "GRPC")
	want := kinds.Counters{Success: kinds.Duration{Count: 2, Ns: 2_150_000}, Fail: kinds.Duration{Count: 1}}
	if got != want {
		t.Errorf("read back %+v, want %+v\n%s", got, want, text)
	}
	if !strings.Contains(text, `:tensorflow:serving:request_count{model_name="simple",status="INVALID_ARGUMENT"} 1`) {
		t.Errorf("no count by status:\n%s", text)
	}
}

func TestParsePromRefused(t *testing.T) {
	for _, body := range []string{`{"error": "not found"}`, "<html>no</html>\n", "metric{a=\"b\" 1\n"} {
		if _, err := parseProm([]byte(body)); err == nil {
			t.Errorf("%q parsed as Prometheus text", body)
		}
	}
}

// FuzzPromCounters: no exposition makes the parse or the reading panic.
func FuzzPromCounters(f *testing.F) {
	b, err := os.ReadFile("testdata/prometheus.txt")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(":tensorflow:serving:request_count{model_name=\"m\",status=\"OK\"} NaN\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		fams, err := parseProm(body)
		if err != nil {
			return
		}
		_ = promCounters(fams, "half_plus_two", "GRPC")
	})
}

// A latency sum printed with 6 significant digits moves in steps of its
// last digit; one printed in full is exact.
func TestPrintedStep(t *testing.T) {
	for _, tc := range []struct{ v, want float64 }{
		{1.23457e+09, 1e4}, // 10 ms steps: a long-running server
		{1.23457e+10, 1e5},
		{1.23457e+06, 10},
		{123456.7, 0},  // under 10^6 µs: every digit shown
		{1234567.0, 0}, // seven digits: not rounded to six
		{1.2e+07, 100}, // fewer digits shown, same step
		{9.99999e+08, 1000},
	} {
		if got := printedStep(tc.v); math.Abs(got-tc.want) > 1e-9*tc.want {
			t.Errorf("printedStep(%g) = %g, want %g", tc.v, got, tc.want)
		}
	}
}
