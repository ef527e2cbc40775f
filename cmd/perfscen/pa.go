package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfscen/perfscen/internal/atomicfile"
	"github.com/perfscen/perfscen/internal/engine"
	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/internal/pacompat"
	"github.com/perfscen/perfscen/internal/scenariorun"
	"github.com/perfscen/perfscen/internal/verdict"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
	"github.com/perfscen/perfscen/scenario"
)

func init() { register(newPACmd) }

const paLong = `pa runs a perf_analyzer (r24.05) command line through perfscen: the same
flags, parsed by perf_analyzer's rules (any unambiguous prefix of a long
option, -b8 or -b 8, its checks and their messages), measured by perfscen's
runner, reported in perf_analyzer's console format and, with -f, its CSV.
Service kinds: triton (HTTP or gRPC, system or CUDA shared memory),
triton_c_api, tfserving, torchserve, openai (--endpoint, the input data's
payloads sent as written) and dynamic_grpc (--grpc-method, the method
described by the server's reflection). --request-intervals replays its
file of gaps in a loop; --profile-export-file writes perf_analyzer's
per-request JSON (every request's send and response times, and an OpenAI
request's body and server-sent events, as GenAI-Perf and AIPerf read them).

--emit-scenario FILE writes the equivalent scenario instead of measuring:
each key commented with the flag it comes from, checked by loading it back,
written atomically. Run it with perfscen run FILE to gate on thresholds and
baselines, one script line at a time (with --csv for a line's -f). It is
named perf_analyzer-MODEL, then FILE's name when that is not the model's,
so lines of one model written to files of one folder run together.

Options perfscen cannot honour are refused by name with the reason (exit 2),
never dropped: periodic concurrency, request parameters, trace settings,
MPI, gRPC request compression outside service kind triton, and
--request-count at a request rate or with custom intervals. As in perf_analyzer, a sequence model is found from the model's
configuration on the server (correlation ids, async unless --sync, lengths
varied by --sequence-length-variation), and a synchronous
--concurrency-range S:0 ends at --max-threads (16 by default), with
perf_analyzer's warning. A command line perf_analyzer itself
refuses (say --concurrency-range with --request-rate-range) exits 2 with its
message. docs/perf_analyzer-migration.md goes flag by flag.

Exit codes: 0 every level measured · 1 a check failed on the data (e.g. -l
and no level under the limit, failed requests) · 2 invalid command line,
data or model · 3 could not measure (server unreachable, a level that did
not stabilize).`

func newPACmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "pa [perf_analyzer options] [--emit-scenario FILE]",
		Short: "Run a perf_analyzer command line: same flags, console report and CSV, measured by perfscen",
		Long:  paLong,
		Example: `  perfscen pa -m simple --percentile=95 --concurrency-range 1:8
  perfscen pa -m simple -u 127.0.0.1:8001 -i grpc --shared-memory system --concurrency-range 8:128:8 -f out.csv
  perfscen pa -m simple_sequence -u 127.0.0.1:8001 -i grpc --concurrency-range 1:64 -l 50 --binary-search --percentile=99 --emit-scenario seq.yaml`,
		// perf_analyzer's own option syntax (getopt_long) is parsed by
		// pacompat; cobra would read -b8 or --concurrency=10 differently.
		DisableFlagParsing: true,
		RunE:               func(cmd *cobra.Command, args []string) error { return runPA(e, cmd, args) },
	}
}

// paFlags are perfscen's own options to pa, taken out before the command
// line is read as perf_analyzer's.
type paFlags struct {
	emit string
	help bool
}

func splitPAFlags(args []string) (paFlags, []string, error) {
	var f paFlags
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-h" || a == "--help" || a == "-?":
			f.help = true
		case a == "--emit-scenario":
			if i+1 >= len(args) {
				return f, nil, errors.New("--emit-scenario needs a file name")
			}
			i++
			f.emit = args[i]
		case strings.HasPrefix(a, "--emit-scenario="):
			f.emit = strings.TrimPrefix(a, "--emit-scenario=")
		case a == "--":
			rest = append(rest, args[i:]...)
			return f, rest, nil
		default:
			rest = append(rest, a)
		}
	}
	return f, rest, nil
}

func runPA(e *env, cmd *cobra.Command, args []string) error {
	f, rest, err := splitPAFlags(args)
	if err != nil {
		return usageError(cmd, err)
	}
	if f.help {
		fmt.Fprintln(e.stdout, cmd.Long)
		fmt.Fprintf(e.stdout, "\nUsage:\n  %s\n", cmd.UseLine())
		return nil
	}
	p, err := pacompat.Parse(rest)
	if err != nil {
		return usageError(cmd, err)
	}
	if p.Version {
		fmt.Fprintf(e.stdout, "perfscen pa %s: perf_analyzer r24.05 command lines, measured by perfscen\n", version)
		return nil
	}
	sc, err := pacompat.BuildScenario(p, rest, f.emit)
	if err != nil {
		return exitcode.AsInvalid(err)
	}
	if sc, err = settleModel(e, p, sc, rest, f.emit); err != nil {
		return exitcode.AsInvalid(err)
	}
	for _, w := range p.Warnings {
		fmt.Fprintln(e.stderr, w)
	}
	for _, n := range p.Notes {
		fmt.Fprintf(e.stderr, "perfscen pa: note: %s\n", n)
	}
	for _, n := range sc.Notes {
		fmt.Fprintf(e.stderr, "perfscen pa: note: %s\n", n)
	}
	if f.emit != "" {
		return emitScenario(e, f.emit, p, sc)
	}
	return measurePA(e, p, sc)
}

// loadPA loads the command line's scenario as if from name; its problems
// are told by the flag they come from.
func loadPA(e *env, name string, sc *pacompat.Scenario) (*scenario.Scenario, error) {
	s, err := scenario.Parse(name, sc.YAML, e.getenv)
	if err == nil {
		return s, nil
	}
	var errs *scenario.Errors
	if !errors.As(err, &errs) {
		return nil, exitcode.AsInvalid(err)
	}
	lines := make([]string, 0, len(errs.List))
	for _, x := range errs.List {
		lines = append(lines, flagOf(sc, x.Path)+x.Msg)
	}
	return nil, exitcode.AsInvalid(errors.New(strings.Join(lines, "\n")))
}

// flagOf names the option a scenario path came from, "" when none did.
func flagOf(sc *pacompat.Scenario, path string) string {
	best := ""
	for at := range sc.Flags {
		if (path == at || strings.HasPrefix(path, at+".") || strings.HasPrefix(path, at+"[")) && len(at) > len(best) {
			best = at
		}
	}
	if best == "" {
		if path == "" {
			return ""
		}
		return path + ": "
	}
	return sc.Flags[best] + ": "
}

func emitScenario(e *env, file string, p *pacompat.Params, sc *pacompat.Scenario) error {
	if _, err := loadPA(e, file, sc); err != nil {
		return fmt.Errorf("the equivalent scenario does not load, so it was not written:\n%w", err)
	}
	if err := atomicfile.Write(file, sc.YAML, 0o644); err != nil {
		return exitcode.AsEnvironment(err)
	}
	fmt.Fprintf(e.stderr, "perfscen pa: wrote %s (loaded back and valid); run it with: %s\n", file, pacompat.RunHint(p, file))
	return nil
}

func measurePA(e *env, p *pacompat.Params, sc *pacompat.Scenario) error {
	wd, err := os.Getwd()
	if err != nil {
		return exitcode.AsEnvironment(err)
	}
	s, err := loadPA(e, filepath.Join(wd, "perf_analyzer-command-line.yaml"), sc)
	if err != nil {
		return err
	}
	pl, err := scenario.Expand(s)
	if err != nil {
		return exitcode.AsInvalid(err)
	}
	if err := engine.CheckWorkers(pl, engine.MachineCapacity()); err != nil {
		return exitcode.AsInvalid(err)
	}
	opts, err := runOptions(e, pl, reportFlags{quiet: true, noBaseline: true, connectTimeout: scenariorunDefaultConnect})
	if err != nil {
		return err
	}
	if p.MetricsMsSet {
		opts.Engine.MetricsInterval = time.Duration(p.MetricsMs) * time.Millisecond
	}
	pr := &paPrinter{e: e, p: p, results: map[string]*result.Point{}}
	if p.ProfileExport != "" {
		pr.export = pacompat.NewExport(p, version)
		defer pr.export.Close()
		opts.Engine.Requests = pr.export.Request
	}
	opts.Progress = pr.event
	opts.Probed = pr.probed
	pacompat.Settings(e.stdout, p)
	run, v, runErr := scenariorun.Run(e.ctx, pl, opts)
	if runErr != nil {
		fmt.Fprintf(e.stderr, "perfscen pa: %v\n", runErr)
	}
	if v == nil {
		return exitSilently(exitcode.Of(runErr))
	}
	pacompat.Summary(e.stdout, p, pr.reported)
	code := run.Verdict.ExitCode
	if p.File != "" && len(pr.reported) > 0 {
		if err := atomicfile.Write(p.File, pacompat.CSV(p, pr.reported), 0o644); err != nil {
			fmt.Fprintf(e.stderr, "perfscen pa: %v\n", err)
			code = worse(code, exitcode.Environment)
		}
	}
	if pr.export != nil {
		if err := atomicfile.WriteWith(p.ProfileExport, 0o644, pr.export.Write); err != nil {
			fmt.Fprintf(e.stderr, "perfscen pa: --profile-export-file: %v\n", err)
			code = worse(code, exitcode.Environment)
		}
	}
	for _, c := range v.Checks {
		if c.Kind == verdict.KindSearch && c.Status != verdict.StatusFail {
			fmt.Fprintf(e.stderr, "perfscen pa: -l %d: %s\n", p.LatencyThresholdMs, c.Message)
		}
		if c.Status == verdict.StatusFail || c.Status == verdict.StatusInconclusive {
			where := ""
			if c.Point != "" {
				where = " @ " + c.Point
			}
			fmt.Fprintf(e.stderr, "perfscen pa: %s: %s%s: %s\n", c.Status, c.Name, where, c.Message)
		}
	}
	return exitSilently(code)
}

// scenariorunDefaultConnect is how long pa waits for the server to be
// ready: perf_analyzer tries once, so a server that is not up fails fast.
const scenariorunDefaultConnect = 10 * time.Second

// paPrinter prints perf_analyzer's per-level sections as the run goes.
type paPrinter struct {
	e        *env
	p        *pacompat.Params
	passes   int
	results  map[string]*result.Point // the last figures of each probe
	reported []*result.Point
	export   *pacompat.Export // --profile-export-file's records, nil without it
}

func (pr *paPrinter) event(ev engine.Event) {
	w := pr.e.stdout
	switch ev.Kind {
	case engine.PointStarted:
		if ev.Point.Search == "" || !pr.measured(ev.Point.ID) {
			pacompat.LevelStart(w, ev.Point)
		}
		pr.passes = 0
	case engine.WindowDone:
		if pr.export != nil {
			pr.export.Window(ev.Point, ev.Start, ev.End)
		}
		pr.passes++
		if pr.p.Verbose && ev.Metrics != nil {
			pacompat.Pass(w, pr.p, pr.passes, ev.Metrics)
		}
	case engine.PointDone:
		if ev.Point.Search != "" {
			pr.results[ev.Point.ID] = ev.Result // judged by the search
			return
		}
		pr.report(ev.Result, pacompat.Reported(pr.p, ev.Result))
	}
}

func (pr *paPrinter) measured(id string) bool { _, ok := pr.results[id]; return ok }

// probed prints a search's probe once it is judged: perf_analyzer reports
// a level under -l and says so of one over it.
func (pr *paPrinter) probed(_ *plan.Search, probe result.Probe) {
	pt := pr.results[probe.Point]
	if pt == nil {
		return
	}
	if probe.Outcome == result.ProbeFails && pt.Status == result.PointStable {
		pacompat.OverLimit(pr.e.stderr, pr.p)
		return
	}
	pr.report(pt, probe.Outcome == result.ProbeMeets)
}

// report prints a measured level: its sections when perf_analyzer would
// report it, else perf_analyzer's reason on stderr.
func (pr *paPrinter) report(pt *result.Point, ok bool) {
	switch {
	case ok:
		pacompat.Level(pr.e.stdout, pr.p, pt)
		pr.reported = append(pr.reported, pt)
	case pt.Status == result.PointUnstable:
		pacompat.Unstable(pr.e.stderr, pr.p, pt)
	case pt.Status == result.PointStable:
		pacompat.OverLimit(pr.e.stderr, pr.p)
	default:
		why := slices.Clone(pt.Errors.First)
		why = append(why, pt.Notes...)
		fmt.Fprintf(pr.e.stderr, "perfscen pa: level %s %s: %s\n", levelOf(pt), pt.Status, strings.Join(why, "; "))
	}
}

func levelOf(pt *result.Point) string {
	if pt.RequestRate > 0 {
		return fmt.Sprintf("request rate %g", pt.RequestRate)
	}
	return fmt.Sprintf("concurrency %d", pt.Concurrency)
}
