package runner_test

import (
	"context"
	"fmt"
	"os"

	"github.com/perfscen/perfscen/runner"
	"github.com/perfscen/perfscen/scenario"
)

// Load a scenario, run it against the embedded reference server, and read
// the verdict perfscen run would exit with.
func ExampleRun() {
	p, err := scenario.LoadPlan("testdata/example.yaml", os.Getenv)
	if err != nil {
		fmt.Println(err)
		return
	}
	run, err := runner.Run(context.Background(), p, runner.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	pt := run.Points[0]
	fmt.Println(pt.ID, pt.Status, pt.Summary.Requests, "requests", pt.Validation.Mismatches, "mismatches")
	fmt.Println(run.Verdict.Outcome, "exit", run.Verdict.ExitCode)
	// Output:
	// simple/c=2 stable 200 requests 0 mismatches
	// pass exit 0
}
