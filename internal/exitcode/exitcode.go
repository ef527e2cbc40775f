// Package exitcode is the one table of perfscen's process exit codes and
// the mapping from errors and verdict outcomes to them. Only cmd/perfscen,
// the scenario shell under it (internal/scenariorun) and tests of the
// binary import it: library packages mark errors with internal/failure,
// and a test here keeps it that way.
package exitcode

import (
	"errors"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/runner/result"
)

const (
	// OK: every check passed.
	OK = 0
	// CheckFailed: a threshold, comparison, validation or baseline check failed.
	CheckFailed = 1
	// Invalid: the scenario, input data, baseline file or command line is invalid.
	Invalid = 2
	// Environment: the server or environment failed (unreachable, errors,
	// killed mid-run, unstable measurement, interrupted).
	Environment = 3
	// Inconclusive: the data cannot yet tell a regression from noise, even
	// after the extra trials the scenario allowed; measure more (or on a
	// quieter testbed) before deciding.
	Inconclusive = 4
)

// Error attaches an exit code to an error.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// With wraps err with code; nil stays nil.
func With(code int, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: code, Err: err}
}

// Invalidf-style helpers keep call sites short.
func AsInvalid(err error) error     { return With(Invalid, err) }
func AsEnvironment(err error) error { return With(Environment, err) }

// Of returns the exit code for err: a code cmd attached with With, else
// the code of the failure kind a library marked it with, else Environment
// (an unexpected failure is never a pass and never blamed on the user's
// input).
func Of(err error) int {
	if err == nil {
		return OK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if failure.KindOf(err) == failure.InvalidInput {
		return Invalid
	}
	return Environment
}

// ForOutcome is the exit code of a verdict outcome (result.Outcome*:
// verdict.Outcome values are the same strings).
func ForOutcome[O ~string](o O) int {
	switch string(o) {
	case result.OutcomeFail:
		return CheckFailed
	case result.OutcomeNotMeasured, result.OutcomeInterrupted:
		return Environment
	case result.OutcomeInconclusive:
		return Inconclusive
	}
	return OK
}
