// Package verdict turns a measured run into pass/fail checks: absolute
// thresholds, same-run model comparisons (a rank test plus a bootstrap
// interval of the median ratio: Wilcoxon's signed-rank test on the ratios
// of interleaved rounds, else Mann–Whitney U on the two arms) and the
// baseline history gate.
package verdict
