package report

import (
	"strings"
	"testing"

	"github.com/perfscen/perfscen/runner/result"
)

// Every measured point is in the CSV with its status, an unstable one a
// scenario allowed included; a run that measured nothing gets a header,
// never an error after the verdict.
func TestCSVCarriesEveryMeasuredPoint(t *testing.T) {
	run, v := fixture(t)
	run.Points = run.Points[:2]
	for i := range run.Points {
		run.Points[i].Model = "onnx"
	}
	run.Points[0].Status = result.PointUnstable
	out := string(render(t, "csv", run, v, Options{}))
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasSuffix(lines[0], ",Status") {
		t.Fatalf("want a header and 2 rows:\n%s", out)
	}
	if !strings.Contains(out, ",unstable\n") || !strings.Contains(out, ",stable\n") {
		t.Errorf("rows lack their status:\n%s", out)
	}

	none := *run
	none.Points = []result.Point{{ID: "onnx/c=1", Model: "onnx", Status: result.PointFailed}}
	out = string(render(t, "csv", &none, v, Options{}))
	if strings.Count(out, "\n") != 1 || !strings.HasPrefix(out, "Concurrency,") {
		t.Errorf("a run with nothing measured: want the header alone, got\n%s", out)
	}
}
