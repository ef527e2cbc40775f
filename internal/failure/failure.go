// Package failure classifies an error by whose it is: the user's input
// (scenario, data, baseline file, command line) or the environment (the
// server, the network, the machine). Library packages mark their errors
// with it; only cmd/perfscen turns a kind into a process exit code, so no
// library needs to know the exit-code table.
package failure

import "errors"

// Kind is what an error says about the run.
type Kind int

const (
	// Unclassified is an error nobody marked. cmd treats it as an
	// environment failure: an unexpected error is never a pass and never
	// blamed on the user's input.
	Unclassified Kind = iota
	// InvalidInput: the scenario, input data, baseline or command line is
	// wrong; fixing the input fixes the run.
	InvalidInput
	// Environment: the server or environment failed; the input may be fine.
	Environment
)

func (k Kind) String() string {
	switch k {
	case InvalidInput:
		return "invalid input"
	case Environment:
		return "environment"
	}
	return "unclassified"
}

// Error marks Err with a Kind.
type Error struct {
	Kind Kind
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Invalid marks err as the input's fault; nil stays nil.
func Invalid(err error) error { return mark(InvalidInput, err) }

// Env marks err as the environment's fault; nil stays nil.
func Env(err error) error { return mark(Environment, err) }

func mark(k Kind, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Kind: k, Err: err}
}

// KindOf returns the outermost kind err carries, or Unclassified.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Unclassified
}
