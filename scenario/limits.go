package scenario

import (
	"fmt"

	"github.com/perfscen/perfscen/internal/numfmt"
	"github.com/perfscen/perfscen/runner/plan"
)

// checkConcurrency refuses at p a number of outstanding requests no run
// can hold, naming the limit and what it would take; it reports whether
// n is within it.
func checkConcurrency(c *collector, p path, n int) bool {
	if n <= plan.MaxConcurrency {
		return true
	}
	c.at(p, "%s", concurrencyLimitText(n))
	return false
}

func concurrencyLimitText(n int) string {
	return fmt.Sprintf("%d requests outstanding: at most %d (each is a worker of its own, about %s with its connection: %d would need about %s)",
		n, plan.MaxConcurrency, numfmt.Bytes(plan.WorkerBytes), n, numfmt.Bytes(float64(n)*plan.WorkerBytes))
}
