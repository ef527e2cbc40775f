package baseline

import (
	"fmt"
	"math"

	"github.com/perfscen/perfscen/runner/plan"
)

// FormatValue renders a metric value in its unit for people: latencies in
// ms or µs, throughput per second, counts and fractions as numbers.
func FormatValue(metric string, v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	mi, _ := plan.LookupMetric(metric)
	switch mi.Unit {
	case "us":
		if math.Abs(v) >= 1000 {
			return fmt.Sprintf("%.2fms", v/1000)
		}
		return fmt.Sprintf("%.0fµs", v)
	case "infer/s":
		return fmt.Sprintf("%.1f/s", v)
	case "fraction":
		return fmt.Sprintf("%.2f%%", 100*v)
	}
	return fmt.Sprintf("%.4g", v)
}
