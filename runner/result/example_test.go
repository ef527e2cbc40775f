package result_test

import (
	"fmt"

	"github.com/perfscen/perfscen/runner/result"
)

// Read a result file perfscen run wrote (--out) and take a point's
// figure the way checks do.
func ExampleReadFile() {
	run, err := result.ReadFile("testdata/example.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range run.Points {
		p95, ok := p.Summary.Value("p95")
		fmt.Printf("%s %s: %.0f infer/s, p95 %.0f us (%v)\n", p.ID, p.Status, p.Summary.Throughput, p95, ok)
	}
	fmt.Println(run.Verdict.Outcome)
	// Output:
	// simple/c=2 stable: 6331 infer/s, p95 337 us (true)
	// pass
}
