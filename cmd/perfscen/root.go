package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfscen/perfscen/internal/exitcode"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// env is the process state commands may read; tests replace it.
type env struct {
	ctx    context.Context
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
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

Exit codes: 0 pass · 1 a check failed · 2 invalid scenario, data or command
line · 3 server or environment failure (unreachable, errors, unstable).`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(e.stdin)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return exitcode.AsInvalid(fmt.Errorf("%w\nsee '%s --help'", err, c.CommandPath()))
	})
	for _, c := range commands {
		root.AddCommand(c(e))
	}
	return root
}

// run is main without the process: it returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{ctx: ctx, stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv}
	root := newRoot(e)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitcode.OK
	}
	code := exitcode.Of(err)
	var ee *exitcode.Error
	if !errors.As(err, &ee) && isUsageError(err) {
		code = exitcode.Invalid
	}
	var silent *silentError
	if !errors.As(err, &silent) {
		fmt.Fprintf(stderr, "perfscen: %v\n", err)
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

// cobra reports unknown commands and bad arguments as plain errors.
func isUsageError(err error) bool {
	s := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires at least", "invalid argument", "flag needs an argument"} {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}
