// Package execute is the imperative shell around one scenario run: it
// starts the embedded server when the plan asks for it, connects a client
// per protocol, reads each model's metadata and config, loads and checks the
// input data, and hands everything to the runner.
package launch
