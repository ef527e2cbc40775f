//go:build race

package testbin

// raceEnabled is true when the tests themselves run with -race; the
// binary they start is then built with -race too, so the code under test
// in a subprocess is race-checked like the code in the test process.
const raceEnabled = true
