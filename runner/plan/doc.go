// Package plan is the resolved, expanded description of one scenario run:
// the ordered sweep points the runner executes and the checks the verdict
// evaluates. It is produced by scenario.Expand and read by runner, verdict and
// report, so none of them needs to know the YAML.
package plan
