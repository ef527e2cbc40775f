// Package scenario owns the scenario file format (version 1): the typed
// model with its yaml tags, strict loading against schemas/scenario.schema.json
// with every error located at file:line:column, unit parsing, semantic checks,
// and expansion of the sweep into a plan.Plan.
package scenario
