package verdict

import "fmt"

// Sequential looks. A check whose interval straddles its bound is not a
// verdict yet: perfscen measures more trials for its point and decides
// again, up to MaxLooks times in all. Deciding repeatedly on growing data
// inflates error rates unless each look has a share of α. The shares are
// fixed in advance (alpha spending with a Bonferroni bound): the first
// look gets 90% of α, and the remaining 10% is split evenly over the
// later looks. By the union bound the chance of any wrong decision over
// all looks is at most α, whatever the correlation between looks; within
// one look Holm's procedure shares that look's level across checks.

// firstLookShare is the part of α spent on the first look when more
// looks may follow: most runs decide there, so it keeps the most power.
const firstLookShare = 0.9

// spend is the part of alpha the current look may use.
func (o Options) spend(alpha float64) float64 {
	if o.MaxLooks <= 1 {
		return alpha
	}
	if o.Look <= 1 {
		return firstLookShare * alpha
	}
	return (1 - firstLookShare) * alpha / float64(o.MaxLooks-1)
}

// lookNote says which look decided, for messages.
func (o Options) lookNote() string {
	if o.MaxLooks <= 1 {
		return ""
	}
	return fmt.Sprintf(", look %d of %d", max(o.Look, 1), o.MaxLooks)
}

// lookID identifies a check across looks: its rule's Key at its point.
// Display names are no identity: two rules may share one (a threshold
// written twice with different selectors, comparisons built outside a
// scenario), and the stability check renames itself when its point fails.
type lookID struct {
	key   CheckKey
	point string
}

func lookIDOf(c Check) lookID { return lookID{c.Key, c.Point} }

// Settle carries decisions across looks: a comparison or baseline check
// that passed, failed or was skipped at an earlier look keeps that
// outcome, and only those that were inconclusive take their status from
// the new look. Without this, a later look's smaller share of α could
// undo a decision made on data that did not change. The other checks
// (thresholds, error budgets, stability, validation) spend no α: they
// judge the point's figures, so they are judged again at every look on
// the figures as they are then, the ones the report's tables show. A
// check without a Key is never carried: it could not be told from
// another rule's check.
func Settle(prev, next *Verdict) *Verdict {
	if prev == nil {
		return next
	}
	decided := map[lookID]Check{}
	for _, c := range prev.Checks {
		if c.Status != StatusInconclusive && c.Key != "" && spendsAlpha(c.Kind) {
			decided[lookIDOf(c)] = c
		}
	}
	out := *next // the new look's notices and run-level state
	out.Checks = nil
	for _, c := range next.Checks {
		if d, ok := decided[lookIDOf(c)]; ok && c.Key != "" {
			c = d
		}
		out.Checks = append(out.Checks, c)
	}
	return &out
}

// spendsAlpha says whether checks of kind are statistical tests with a
// share of α per look (Options.spend).
func spendsAlpha(kind Kind) bool { return kind == KindComparison || kind == KindBaseline }

// Undecided lists the point IDs whose checks are still inconclusive and
// would be decided by more trials: comparison checks name both arms.
// Checks made inconclusive by a disturbed testbed are left out: more
// trials on a busy machine do not make it quiet.
func (v *Verdict) Undecided() []string {
	seen := map[string]bool{}
	var ids []string
	add := func(id string) {
		if id != "" && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	for _, c := range v.Checks {
		if c.Status != StatusInconclusive || c.Disturbed {
			continue
		}
		add(c.Point)
		add(c.RefPoint)
	}
	return ids
}
