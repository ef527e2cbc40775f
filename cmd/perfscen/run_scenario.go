package main

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/perfscen/perfscen/internal/atomicfile"
	"github.com/perfscen/perfscen/internal/engine"
	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/internal/fleet"
	"github.com/perfscen/perfscen/internal/report"
	"github.com/perfscen/perfscen/internal/scenariorun"
	"github.com/perfscen/perfscen/internal/verdict"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
	"github.com/perfscen/perfscen/scenario"
)

// runOne runs one scenario file end to end and returns its exit code and
// its line of the roll-up table; it prints everything it has to say
// itself. Every scenario that got as far as its plan gets its outputs, a
// run that never reached the server included, so CI sees each scenario's
// verdict.
func runOne(e *env, file string, f reportFlags, many bool) (int, rollup) {
	roll := rollup{scenario: file, outcome: "invalid", code: exitcode.Invalid}
	invalid := func(err error) (int, rollup) {
		if err != nil {
			roll.deciding, _, _ = strings.Cut(err.Error(), "\n")
		}
		return exitcode.Invalid, roll
	}
	// failed is invalid, or could not measure when err says so (agents
	// that never came, a server option that cannot be met).
	failed := func(err error) (int, rollup) {
		code, r := invalid(err)
		if c := exitcode.Of(err); c != exitcode.Invalid {
			code, r.code, r.outcome = c, c, "could not measure"
		}
		return code, r
	}
	pl, err := scenario.LoadPlanWith(file, e.getenv, f.set)
	if err != nil {
		fmt.Fprintln(e.stderr, err)
		return invalid(err)
	}
	for _, o := range pl.Overrides {
		if !f.quiet {
			fmt.Fprintf(e.stderr, "perfscen: %s: --set %s\n", file, o)
		}
	}
	roll.scenario = pl.Scenario
	if err := checkStdoutFormat(f.format, pl); err != nil {
		fmt.Fprintf(e.stderr, "perfscen: %s: %v\n", file, err)
		return invalid(err)
	}
	if f.requireGated {
		pl.Checks.Gate.RequireGated = true
	}
	notes, err := applyModelParams(pl, f.modelParams)
	for _, n := range notes {
		fmt.Fprintf(e.stderr, "perfscen: note: %s\n", n)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "perfscen: %v\n", err)
		return invalid(err)
	}
	// The embedded server's models and parameters are checked as validate
	// checks them, before it starts.
	if err := checkEmbedded(pl); err != nil {
		printScenarioError(e, file, err)
		return invalid(err)
	}
	if err := checkKinds(pl); err != nil {
		printScenarioError(e, file, err)
		return invalid(err)
	}
	if f.fleet.agents == 0 {
		// The load runs here: refuse what this machine cannot hold before
		// the first worker starts (agents have their own machines).
		if err := engine.CheckWorkers(pl, engine.MachineCapacity()); err != nil {
			fmt.Fprintf(e.stderr, "perfscen: %s: %v\n", file, err)
			return invalid(err)
		}
	}
	// A bad baseline is refused before any load is sent, and checks are
	// decided while the server is still up, so inconclusive ones can get
	// more trials before the verdict.
	opts, err := runOptions(e, pl, f)
	if err != nil {
		fmt.Fprintf(e.stderr, "perfscen: %v\n", err)
		return failed(err)
	}
	opts.Log = e.stderr
	var coord *fleet.Coordinator
	if f.fleet.agents > 0 {
		if coord, err = startFleet(e, pl, f); err != nil {
			printScenarioError(e, file, err)
			return failed(err)
		}
		opts.Remote = coord
	}
	run, v, runErr := scenariorun.Run(e.ctx, pl, opts)
	if coord != nil {
		finishFleet(e, coord, run)
	}
	// With a verdict the console report carries the error that stopped
	// the run (the summary line quotes it): stderr does not repeat it.
	// A machine-readable stdout (json, csv) leaves it to stderr.
	if runErr != nil && (v == nil || f.format != "console") {
		if run == nil {
			fmt.Fprintf(e.stderr, "perfscen: %v\n", runErr)
		} else {
			fmt.Fprintf(e.stderr, "perfscen: %s: %v\n", file, runErr)
		}
	}
	if v == nil {
		// The scenario, its data or its baseline is wrong: no verdict to
		// record.
		return invalid(runErr)
	}
	code := run.Verdict.ExitCode
	if p := resultPath(f, pl.Scenario, many); p != "" {
		// Results are written whatever happened, partial runs included,
		// so nothing measured is lost.
		if err := result.WriteFile(p, run); err != nil {
			fmt.Fprintf(e.stderr, "perfscen: %v\n", err)
			code = worse(code, exitcode.Environment)
		} else if !f.quiet {
			fmt.Fprintf(e.stderr, "results written to %s\n", p)
		}
	}
	if err := writeReports(e, f, pl, run, v, many); err != nil {
		fmt.Fprintf(e.stderr, "perfscen: %v\n", err)
		code = worse(code, exitcode.Of(err))
	}
	roll = rollupOf(pl.Scenario, code, run)
	return code, roll
}

func resultPath(f reportFlags, name string, many bool) string {
	if f.out != "" {
		return outputPath(f.out, name, many)
	}
	if f.outDir == "" {
		return ""
	}
	return filepath.Join(f.outDir, name+".json")
}

func writeReports(e *env, f reportFlags, pl *plan.Plan, run *result.Run, v *verdict.Verdict, many bool) error {
	opts := report.Options{Color: report.ColorFor(e.stdout, e.getenv)}
	if pl.Measurement.Percentile > 0 {
		opts.Percentile = fmt.Sprintf("p%d", pl.Measurement.Percentile)
	}
	// The verdict is decided and recorded: a report that cannot render
	// its format (everything that could be refused was, before the load)
	// is said loudly, but it does not change the exit code the result
	// file, JUnit and the summary line already state. Only a file that
	// cannot be written is an environment failure.
	renderFailed := func(format string, err error) {
		fmt.Fprintf(e.stderr, "perfscen: warning: %s report: %v (the verdict and exit code stand)\n", format, err)
	}
	if err := report.Render(e.stdout, f.format, run, v, opts); err != nil {
		renderFailed(f.format, err)
	}
	// Every output is attempted: one that fails must not keep the others
	// (Markdown, step summary, annotations) from being written.
	var errs []error
	files := []struct{ path, format string }{
		{f.junit, "junit"}, {f.html, "html"}, {f.csv, "csv"}, {f.markdown, "markdown"},
	}
	for _, o := range files {
		if o.path == "" {
			continue
		}
		fo := opts
		fo.Color = false
		fo.VerboseCSV = f.csvVerbose
		path := outputPath(o.path, pl.Scenario, many)
		if o.format == "csv" {
			errs = append(errs, writeCSVs(path, run, v, fo, renderFailed))
			continue
		}
		var buf bytes.Buffer
		if err := report.Render(&buf, o.format, run, v, fo); err != nil {
			renderFailed(o.format, err)
			continue
		}
		if err := atomicfile.Write(path, buf.Bytes(), 0o644); err != nil {
			errs = append(errs, exitcode.AsEnvironment(err))
		}
	}
	errs = append(errs, report.Annotate(e.stdout, e.getenv, run, v))
	errs = append(errs, report.StepSummary(e.getenv, run, v))
	return errors.Join(errs...)
}

// writeCSVs writes perf_analyzer's CSV layout, which holds one model at
// one value of every swept dimension but the load: a run with several gets
// one file per set, named PATH.<model>[.<dim>=<value>…].csv, so rows never
// mix.
func writeCSVs(path string, run *result.Run, v *verdict.Verdict, opts report.Options, renderFailed func(string, error)) error {
	groups := map[string][]result.Point{}
	var order []string
	keys := csvGroupKeys(run.Points)
	for i, p := range run.Points {
		k := keys[i]
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], p)
	}
	var errs []error
	for _, k := range order {
		sub := *run
		sub.Points = groups[k]
		target := path
		if len(order) > 1 {
			ext := filepath.Ext(path)
			target = strings.TrimSuffix(path, ext) + "." + k + ext
		}
		var buf bytes.Buffer
		if err := report.Render(&buf, "csv", &sub, v, opts); err != nil {
			renderFailed("csv", fmt.Errorf("%s: %w", target, err))
			continue
		}
		if err := atomicfile.Write(target, buf.Bytes(), 0o644); err != nil {
			errs = append(errs, exitcode.AsEnvironment(err))
		}
	}
	return errors.Join(errs...)
}

// runOptions are the scenario-run settings of the flags.
func runOptions(e *env, pl *plan.Plan, f reportFlags) (scenariorun.Options, error) {
	tb, err := testbedFor(e, pl, f.testbed)
	if err != nil {
		return scenariorun.Options{}, err
	}
	opts := scenariorun.Options{
		Version:        version,
		Progress:       progressFor(e, f, pl),
		ConnectTimeout: f.connectTimeout,
		Testbed:        tb,
		NoBaseline:     f.noBaseline,
		Net:            e.net,
	}
	if e.net != nil {
		// In memory, on a fake clock (tests): the machine's real run
		// queue says nothing of figures the fake clock made, and reading
		// it would let a busy test machine turn a regression into
		// "inconclusive: testbed disturbed" at random.
		opts.Engine.SampleCPU = func() (engine.CPUSample, bool) { return engine.CPUSample{}, false }
		if e.sampleCPU != nil {
			opts.Engine.SampleCPU = e.sampleCPU
		}
	}
	return opts, nil
}

// measure runs the plan without deciding it, with progress on stderr when
// it is a terminal.
func measure(e *env, pl *plan.Plan, f reportFlags) (*result.Run, error) {
	opts, err := runOptions(e, pl, f)
	if err != nil {
		return nil, err
	}
	return scenariorun.Measure(e.ctx, pl, opts)
}

// testbedFor names the run's testbed: --testbed, else PERFSCEN_TESTBED,
// else the scenario's baseline.testbed; empty lets the runner derive one
// from the hardware and the server.
func testbedFor(e *env, pl *plan.Plan, flag string) (engine.TestbedName, error) {
	tb := engine.TestbedName{}
	switch {
	case flag != "":
		tb = engine.TestbedName{Name: flag, Source: "flag"}
	case e.getenv("PERFSCEN_TESTBED") != "":
		tb = engine.TestbedName{Name: e.getenv("PERFSCEN_TESTBED"), Source: "env"}
	case pl.Checks.Baseline != nil && pl.Checks.Baseline.Testbed != "":
		tb = engine.TestbedName{Name: pl.Checks.Baseline.Testbed, Source: "scenario"}
	}
	if tb.Name != "" {
		if err := plan.CheckTestbedName(tb.Name); err != nil {
			if tb.Source == "env" {
				err = fmt.Errorf("PERFSCEN_TESTBED: %w", err)
			} else if tb.Source == "flag" {
				err = fmt.Errorf("--testbed: %w", err)
			}
			return tb, exitcode.AsInvalid(err)
		}
	}
	return tb, nil
}

// applyModelParams lays --model-param overrides over the scenario's
// embedded_models: the way to try a slower (or faster) embedded build
// without editing the scenario.
//
// With several servers a flag names its server: server/model.key=value.
// A flag for a model the scenario does not measure is left out with a
// note (returned), so one set of flags serves a run over several
// scenarios (make gate GATE_FLAGS=…): only those with the model get it.
func applyModelParams(pl *plan.Plan, flags []string) (notes []string, err error) {
	if len(flags) == 0 {
		return nil, nil
	}
	params, err := parseModelParams(flags)
	if err != nil {
		return nil, err
	}
	for _, model := range slices.Sorted(maps.Keys(params)) {
		kv := params[model]
		name, _, hasServer := strings.Cut(model, "/")
		if !measuresModel(pl, model) && (!hasServer || slices.Contains(serverNames(pl), name)) {
			notes = append(notes, fmt.Sprintf("--model-param %s.…: scenario %s measures no model %s; not applied to it", model, pl.Scenario, model))
			continue
		}
		srv := &pl.Servers[0]
		if pl.Named() {
			name, m, ok := strings.Cut(model, "/")
			if !ok {
				return notes, fmt.Errorf("--model-param %s.…: with several servers name the server: server/model.key=value (servers: %s)", model, strings.Join(serverNames(pl), ", "))
			}
			srv = nil
			for i := range pl.Servers {
				if pl.Servers[i].Name == name {
					srv = &pl.Servers[i]
				}
			}
			if srv == nil {
				return notes, fmt.Errorf("--model-param %s.…: unknown server %q (servers: %s)", model, name, strings.Join(serverNames(pl), ", "))
			}
			model = m
		}
		if !srv.Embedded {
			return notes, fmt.Errorf("--model-param needs an embedded server (%s talks to %s)", pl.Scenario, srv.URL)
		}
		if srv.EmbeddedModels == nil {
			srv.EmbeddedModels = map[string]map[string]string{}
		}
		if srv.EmbeddedModels[model] == nil {
			srv.EmbeddedModels[model] = map[string]string{}
		}
		for k, v := range kv {
			srv.EmbeddedModels[model][k] = v
		}
	}
	return notes, nil
}

// measuresModel says whether the scenario measures model: by its name on
// the server (model.key=…) or, with several servers, server/model.
func measuresModel(pl *plan.Plan, model string) bool {
	for _, m := range pl.Models {
		if m.Name == model || m.Server != "" && m.Server+"/"+m.Name == model {
			return true
		}
	}
	return false
}

func serverNames(pl *plan.Plan) []string {
	var out []string
	for _, s := range pl.Servers {
		out = append(out, s.Name)
	}
	return out
}
