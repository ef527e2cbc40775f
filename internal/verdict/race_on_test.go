//go:build race

package verdict

const raceEnabled = true
