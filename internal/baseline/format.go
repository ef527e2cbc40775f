package baseline

import (
	"github.com/perfscen/perfscen/internal/numfmt"
	"github.com/perfscen/perfscen/runner/plan"
)

// FormatValue renders a metric value in its unit for people, as every
// report and check message does (numfmt.Value).
func FormatValue(metric string, v float64) string {
	mi, _ := plan.LookupMetric(metric)
	return numfmt.Value(v, mi.Unit)
}
