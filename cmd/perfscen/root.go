package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfscen/perfscen/internal/engine"
	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/internal/kinds"
)

// version is what this binary calls itself in `perfscen version`, result
// files and JUnit. `make build` sets it with -ldflags "-X main.version=…";
// otherwise it comes from the build info Go stamps into every binary (see
// buildVersion), so `go install` builds report their module version or
// VCS revision too.
var version = ""

// ldflagVersion keeps the -ldflags value for `perfscen version`.
var ldflagVersion string

func init() {
	ldflagVersion = version
	info, ok := debug.ReadBuildInfo()
	version = buildVersion(ldflagVersion, info, ok).String()
}

// env is the process state commands may read; tests replace it.
type env struct {
	ctx    context.Context
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
	// net carries embedded servers and clients in memory (tests under
	// testing/synctest); nil uses TCP.
	net *kinds.Net
	// sampleCPU, with net, replaces the machine's CPU counters for the
	// disturbance sentinel (tests of a busy machine on the fake clock);
	// nil with net records none.
	sampleCPU func() (engine.CPUSample, bool)
	// version, when set, is the version this process claims (tests of
	// agents of another version); empty is the binary's.
	version string
	// pods, when set, lists the agents' pods instead of the API server
	// of the pod this runs in (tests of --agent-pods).
	pods podLister
}

// commands lists the constructors of every subcommand; each lives in its
// own file and appends itself here from an init function, so adding a
// command touches one file.
var commands []func(e *env) *cobra.Command

func register(c func(e *env) *cobra.Command) { commands = append(commands, c) }

func newRoot(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "perfscen",
		Short: "Declarative performance scenarios and CI gates for Triton / KServe v2 inference servers",
		Long: `perfscen drives load against a Triton-compatible inference server as a YAML
scenario describes, validates the outputs, checks thresholds, model
comparisons and the stored baseline, and exits nonzero on a regression.

Exit codes: 0 pass (checks that could not detect their change are counted
as not gated) · 1 a check failed · 2 invalid scenario, data or command line ·
3 server or environment failure (unreachable, errors, unstable) · 4
inconclusive (the data cannot yet tell; with --require-gated also a check
that was not gated).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// Runnable so that cobra checks its arguments (an unknown
		// subcommand is an argument error, see markArgErrors) instead of
		// printing help for anything it cannot place.
		RunE:                       func(c *cobra.Command, _ []string) error { return c.Help() },
		SuggestionsMinimumDistance: 2, // cobra's own default, which SuggestionsFor does not apply
	}
	root.SetIn(e.stdin)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetFlagErrorFunc(usageError)
	for _, c := range commands {
		root.AddCommand(c(e))
	}
	markArgErrors(root)
	return root
}

// run is main without the process: it returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runEnv(&env{ctx: ctx, stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv}, args)
}

// runEnv runs the command line args in e.
func runEnv(e *env, args []string) int {
	root := newRoot(e)
	root.SetArgs(args)
	err := root.ExecuteContext(e.ctx)
	if err == nil {
		return exitcode.OK
	}
	code := exitcode.Of(err)
	var silent *silentError
	if !errors.As(err, &silent) {
		fmt.Fprintf(e.stderr, "perfscen: %v\n", err)
	}
	return code
}

// silentError carries an exit code for a failure the command has already
// reported in full (e.g. a failed gate whose report was printed).
type silentError struct{ code int }

func (s *silentError) Error() string { return fmt.Sprintf("exit status %d", s.code) }

// exitSilently returns an error that sets the exit code without printing.
func exitSilently(code int) error {
	if code == exitcode.OK {
		return nil
	}
	return exitcode.With(code, &silentError{code: code})
}

// usageError marks a command-line mistake as invalid input (exit 2) and
// points at the command's help. Cobra hands flag errors to it through
// SetFlagErrorFunc and argument errors through markArgErrors, so nothing
// depends on the wording of cobra's messages.
func usageError(c *cobra.Command, err error) error {
	return exitcode.AsInvalid(fmt.Errorf("%w\nsee '%s --help'", err, c.CommandPath()))
}

// markArgErrors wraps every command's argument check so its errors go
// through usageError. A command with no check gets cobra's own rule made
// explicit: the root refuses an unknown subcommand, others take any
// arguments.
func markArgErrors(c *cobra.Command) {
	check := c.Args
	if check == nil {
		check = func(c *cobra.Command, args []string) error {
			if c.HasParent() || len(args) == 0 {
				return nil
			}
			msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
			if s := c.SuggestionsFor(args[0]); len(s) > 0 {
				msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t")
			}
			return errors.New(msg)
		}
	}
	c.Args = func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return usageError(cmd, err)
		}
		return nil
	}
	for _, sub := range c.Commands() {
		markArgErrors(sub)
	}
}
