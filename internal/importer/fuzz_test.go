package importer

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func addFixtures(f *testing.F, pattern string) {
	paths, err := filepath.Glob(filepath.Join("testdata", pattern))
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// Parsers must return points or an error, never panic, on any input.
func FuzzImportCSV(f *testing.F) {
	addFixtures(f, "*.csv")
	f.Add([]byte("Concurrency,Inferences/Second,Avg GPU Utilization\n1,2,a:1;b:x;\n"))
	f.Add([]byte("Request Rate,Inferences/Second\n1e400,2\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		points, err := ParseCSV("fuzz", bytes.NewReader(b), Options{Model: "m"})
		if err == nil && len(points) == 0 {
			t.Fatal("no error and no points")
		}
	})
}

func FuzzImportLog(f *testing.F) {
	addFixtures(f, "*.log")
	f.Add([]byte("perf_analyzer -m\nRequest concurrency: 1\n"))
	f.Add([]byte("Request Rate: 1 inference requests per seconds\n  Server:\n    Avg request latency: 1 usec (a + b)\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		points, err := ParseLog("fuzz", bytes.NewReader(b), Options{Model: "m"})
		if err == nil && len(points) == 0 {
			t.Fatal("no error and no points")
		}
	})
}

func FuzzImportGenAIPerf(f *testing.F) {
	addFixtures(f, "genai_perf*.csv")
	f.Add([]byte("Metric,avg\nRequest Latency (ms),\"1,000.5\"\nMetric,Value\nRequest Throughput (per sec),1\n"))
	f.Add([]byte("Metric,GPU,Value\nx,0,1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		points, err := ParseGenAIPerf("fuzz", bytes.NewReader(b), Options{Model: "m", Concurrency: 1})
		if err == nil && len(points) != 1 {
			t.Fatalf("no error and %d points", len(points))
		}
	})
}

func FuzzImportAIPerf(f *testing.F) {
	addFixtures(f, "aiperf_*")
	f.Add([]byte(`{"request_throughput": {"unit": "requests/sec", "avg": 1}, "time_to_first_token": {"unit": "ns", "p50": 1e9}}`))
	f.Add([]byte(`{"metadata": {"request_start_ns": 1, "request_end_ns": 2, "turn_index": 0}, "metrics": {"inter_chunk_latency": {"value": [1, 2], "unit": "us"}}, "error": null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		format, points, err := Parse("fuzz", b, Options{Model: "m", Concurrency: 1})
		if err == nil && (format == FormatAIPerfJSON || format == FormatAIPerfRecords) && len(points) != 1 {
			t.Fatalf("%s: no error and %d points", format, len(points))
		}
	})
}
