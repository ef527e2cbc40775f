// Package kinds is the small interface every service kind implements for
// the runner and the engine: Kind opens a server (reached, or its embedded
// flavour started) and checks what the scenario needs of it; Server
// prepares points; Point hands out per-worker Callers and reads the
// server's counters; Caller sends one request and times it. Each kind
// lives in a folder below this one; internal/kinds/all lists them.
package kinds
