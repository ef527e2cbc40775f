//go:build race

package transport

// raceEnabled says the tests run under the race detector, where moving
// 64 MiB through the in-memory network takes tens of seconds.
const raceEnabled = true
