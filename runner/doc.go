// Package runner runs one scenario plan end to end: it starts the embedded
// server when the plan asks for it, reaches every other server, reads each
// model's metadata and config, loads and checks the input data, and hands
// everything to the load engine (internal/engine), which measures it.
package runner
