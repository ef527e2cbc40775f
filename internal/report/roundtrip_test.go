package report

import (
	"bytes"
	"math"
	"testing"

	"github.com/perfscen/perfscen/internal/importer"
	"github.com/perfscen/perfscen/runner/result"
)

// The CSV and console layouts are perf_analyzer's, so the importer (which
// reads perf_analyzer's own files) must read them back to the same
// figures (the points' figures), truncated to whole microseconds as
// perf_analyzer prints them.
func TestRoundTripThroughImporter(t *testing.T) {
	run, _ := fixture(t)
	var csvOut bytes.Buffer
	if err := CSV(&csvOut, run, nil, Options{Model: "onnx", VerboseCSV: true}); err != nil {
		t.Fatal(err)
	}
	fromCSV, err := importer.ParseCSV("csv", &csvOut, importer.Options{Model: "onnx"})
	if err != nil {
		t.Fatal(err)
	}
	trt := &result.Run{Scenario: "x", Source: "perfscen", Status: result.StatusComplete}
	for _, p := range run.Points {
		if p.Model == "trt" {
			trt.Points = append(trt.Points, p)
		}
	}
	var log bytes.Buffer
	if err := Console(&log, trt, nil, Options{}); err != nil {
		t.Fatal(err)
	}
	fromLog, err := importer.ParseLog("log", &log, importer.Options{Model: "trt"})
	if err != nil {
		t.Fatal(err)
	}
	check := func(src string, got []result.Point, want []result.Point, fromLog bool) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d points back, want %d", src, len(got), len(want))
		}
		for i := range want {
			// The files carry the points' figures; read back, they are the
			// imported points' summaries.
			g, w := got[i].Summary, want[i].FigureMetrics()
			if got[i].ID != want[i].ID {
				t.Errorf("%s: point %d id %s, want %s", src, i, got[i].ID, want[i].ID)
			}
			if math.Abs(g.Throughput-w.Throughput) > 1e-6*w.Throughput {
				t.Errorf("%s %s: throughput %v, want %v", src, want[i].ID, g.Throughput, w.Throughput)
			}
			pairs := [][2]float64{{g.P50Us, w.P50Us}, {g.P90Us, w.P90Us}, {g.P95Us, w.P95Us}, {g.P99Us, w.P99Us},
				{g.LatencyAvgUs, w.LatencyAvgUs}, {g.ClientSendRecvUs, w.ClientSendRecvUs}, {g.ClientWaitUs, w.ClientWaitUs}}
			if g.Server == nil {
				t.Fatalf("%s %s: server figures lost", src, want[i].ID)
			}
			pairs = append(pairs, [][2]float64{{g.Server.QueueUs, w.Server.QueueUs}, {g.Server.ComputeInputUs, w.Server.ComputeInputUs},
				{g.Server.ComputeInferUs, w.Server.ComputeInferUs}, {g.Server.ComputeOutputUs, w.Server.ComputeOutputUs}}...)
			if fromLog {
				pairs = append(pairs, [][2]float64{{float64(g.Requests), float64(w.Requests)}, {g.Server.AvgRequestUs, w.Server.AvgRequestUs},
					{float64(g.Server.ExecutionCount), float64(w.Server.ExecutionCount)}}...)
				if got[i].Protocol != want[i].Protocol {
					t.Errorf("%s %s: protocol %s, want %s", src, want[i].ID, got[i].Protocol, want[i].Protocol)
				}
			}
			for j, pr := range pairs {
				if pr[0] != math.Trunc(pr[1]) {
					t.Errorf("%s %s: figure %d is %v, want %v", src, want[i].ID, j, pr[0], math.Trunc(pr[1]))
				}
			}
		}
	}
	check("csv", fromCSV, run.Points[:3], false)
	check("console", fromLog[:2], trt.Points[:2], true)
	if len(fromLog) != 3 || fromLog[2].Status != result.PointUnstable {
		t.Errorf("the unmeasured trt/c=4 should come back as unstable: %+v", fromLog)
	}
}
