package runner

import (
	"context"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/runner/plan"
)

// Nothing listens: the run ends with exit 3 once the connect timeout is
// spent, and not much later.
func TestRunUnreachableServerIsEnvironmentFailure(t *testing.T) {
	p := &plan.Plan{Servers: []plan.Server{{URL: "127.0.0.1:1", Protocol: "http", Timeout: time.Second}},
		Points: []plan.Point{{Protocol: "http"}}}
	start := time.Now()
	_, err := Run(context.Background(), p, Options{ConnectTimeout: 300 * time.Millisecond})
	if exitcode.Of(err) != exitcode.Environment {
		t.Fatalf("err = %v (exit %d), want exit 3", err, exitcode.Of(err))
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("gave up after %s with a 300ms connect timeout", time.Since(start))
	}
}
