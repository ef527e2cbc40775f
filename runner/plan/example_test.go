package plan_test

import (
	"fmt"

	"github.com/perfscen/perfscen/runner/plan"
)

// Metric names checks may use, with their unit and better direction.
func ExampleLookupMetric() {
	for _, name := range []string{"throughput", "p99", "ttft_p50"} {
		m, _ := plan.LookupMetric(name)
		fmt.Println(m.Name, m.Unit, "higher is better:", m.HigherBetter)
	}
	// Output:
	// throughput infer/s higher is better: true
	// p99 us higher is better: false
	// ttft_p50 us higher is better: false
}
