package result

import (
	"crypto/rand"
	"encoding/hex"
	"time"
)

// Verdict is what perfscen decided about a run, recorded with it so later
// commands (baseline update --from, compare) can trust the file without
// re-deciding.
type Verdict struct {
	// Outcome is pass, fail, could_not_measure, interrupted or
	// inconclusive.
	Outcome string `json:"outcome"`
	// ExitCode is the scenario's exit code for that outcome.
	ExitCode int `json:"exit_code"`
	// Summary is the closing line printed for the run.
	Summary string         `json:"summary"`
	Checks  []CheckOutcome `json:"checks"`
	Notices []string       `json:"notices,omitempty"`
}

// Outcomes a Verdict records.
const (
	OutcomePass         = "pass"
	OutcomeFail         = "fail"
	OutcomeNotMeasured  = "could_not_measure"
	OutcomeInterrupted  = "interrupted"
	OutcomeInconclusive = "inconclusive"
)

// CheckOutcome is one evaluated check as recorded in the result.
type CheckOutcome struct {
	Kind   string  `json:"kind"`
	Name   string  `json:"name"`
	Model  string  `json:"model,omitempty"`
	Point  string  `json:"point,omitempty"`
	Metric string  `json:"metric,omitempty"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit,omitempty"`
	Op     string  `json:"op,omitempty"`
	// Bound is the effective bound: a value beyond it fails.
	Bound float64 `json:"bound"`
	// NoValue: the check compared nothing; Value and Bound are no figures.
	NoValue bool `json:"no_value,omitempty"`
	// Status is pass, fail, warn, skip, inconclusive or not_gated (the
	// check could not detect the change it exists for).
	Status      string `json:"status"`
	Message     string `json:"message,omitempty"`
	Environment bool   `json:"environment,omitempty"`
}

// NewRunID names a run: its start time (UTC, to the second) and 32 random
// bits, e.g. 20261122T163300Z-0a1b2c3d. Two runs never share one, and the
// id still sorts and reads by time.
func NewRunID(started time.Time) string {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand does not fail on supported platforms; the nanoseconds
		// keep the id distinct if it ever did.
		return started.UTC().Format("20060102T150405.000000000Z")
	}
	return started.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}
