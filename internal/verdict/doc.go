// Package verdict turns a measured run into pass/fail checks: absolute
// thresholds, same-run model comparisons (Mann–Whitney U plus a bootstrap
// interval of the median ratio) and the baseline history gate.
package verdict
