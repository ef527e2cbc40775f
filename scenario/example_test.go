package scenario_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/perfscen/perfscen/scenario"
)

// Load a scenario file into the plan perfscen runs: the sweep expanded
// into points, every default filled in.
func ExampleLoadPlan() {
	p, err := scenario.LoadPlan("../scenarios/quickstart.yaml", os.Getenv)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Scenario, "embedded:", p.Server().Embedded)
	for _, pt := range p.Points {
		fmt.Println(pt.ID, pt.Load.Mode, pt.Load.Concurrency)
	}
	// Output:
	// quickstart embedded: true
	// simple/c=1 concurrency 1
	// simple/c=2 concurrency 2
	// simple/c=3 concurrency 3
	// simple/c=4 concurrency 4
}

// Every problem of an invalid scenario comes back at once, each with its
// file, line, column and field.
func ExampleParse_errors() {
	_, err := scenario.Parse("bad.yaml", []byte("version: 1\nmodels:\n  - name: simple\n    batch_size: 0\nload: {mode: concurency}\n"), nil)
	var errs *scenario.Errors
	if errors.As(err, &errs) {
		for _, e := range errs.List {
			fmt.Println(e)
		}
	}
	// Output:
	// bad.yaml:1:1: server: missing `url` (or http_url/grpc_url, or set embedded: true to use the built-in reference server)
	// bad.yaml:4:17: models[0].batch_size: must be >= 1 but found 0
	// bad.yaml:5:14: load.mode: "concurency" is not allowed: must be one of "concurrency", "request_rate", "iterations"
}
