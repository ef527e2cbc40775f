// Package validate compares inference outputs with expected tensors (exact
// for integers, BOOL and BYTES; absolute+relative tolerance for floats) and
// decides which responses to check. Pure functions: it never times anything.
//
// Validation runs outside the timed section: the worker records the response
// and compares after taking the timestamp, so checking outputs never inflates
// latency. A Sampler bounds the cost under load: the runner gives each
// time-window point one, shared by its workers, which checks the point's
// first responses in full and then one in N, so a wrong model is caught at
// once while a heavy sweep spends little CPU on comparison.
package validate
