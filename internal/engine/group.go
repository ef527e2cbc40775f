package engine

import (
	"context"
	"slices"

	"github.com/perfscen/perfscen/runner/result"
)

// interleave measures units that share a Group: each stabilizes on its own
// (those windows are recorded, not kept), then rounds of one kept window
// per unit run until each has its trials, so drift over time hits every
// unit of the group alike. Rounds alternate the order (A B, B A, A B …):
// a comparison pairs each round's windows, and a drift within a round then
// favours neither arm. A unit is one point, or one step of a mix with all
// its members under load.
func (rs *runState) interleave(ctx context.Context, units []*unit) (bool, error) {
	for _, u := range units {
		for _, pr := range u.prs {
			rs.progress(Event{Kind: PointStarted, Index: pr.idx, Point: pr.p})
		}
		if u.iterationsOnly() {
			// A fixed count has no windows to alternate; run it whole.
			if interrupted, err := u.standalone(ctx); interrupted || err != nil {
				return interrupted, err
			}
			continue
		}
		first := len(u.prs[0].windows)
		stableAt, err := u.stabilize(ctx, false)
		if interrupted, err := u.outcome(err); interrupted || err != nil {
			return interrupted, err
		}
		if u.failed() {
			continue
		}
		for _, pr := range u.prs {
			switch {
			case pr.aborted != "":
				pr.status = result.PointAborted
				pr.keep(first, len(pr.windows))
			case stableAt < 0:
				pr.status = result.PointUnstable
			default:
				pr.status = result.PointStable
			}
		}
	}
	keep := keepCount(rs.plan.Measurement.Trials)
	for round := 0; round < keep; round++ {
		for _, u := range inRoundOrder(units, round) {
			if u.iterationsOnly() || u.failed() || u.aborted() {
				continue
			}
			if interrupted, err := u.outcome(u.round(ctx)); interrupted || err != nil {
				return interrupted, err
			}
		}
	}
	// The kept rounds are the point's trials: all of them must lie within
	// the stability band, as for a point measured on its own.
	pct := rs.plan.Measurement.StabilityPct
	for _, u := range units {
		if u.iterationsOnly() || u.failed() {
			continue
		}
		unstable := false
		for _, pr := range u.prs {
			if pr.status != result.PointStable || len(pr.kept) == 0 {
				continue
			}
			kept := make([]result.Window, len(pr.kept))
			for i, k := range pr.kept {
				kept[i] = pr.windows[k].win
			}
			if st, _ := isStableAll(kept, pct, pr.p.Load.Async); !st {
				unstable = true
				pr.noteSpread(pr.kept[0])
			}
		}
		if unstable {
			// A mix is stable when every member is.
			for _, pr := range u.prs {
				pr.status = result.PointUnstable
			}
		}
	}
	return false, nil
}

// inRoundOrder is the order of a group's units in its round'th kept round:
// plan order in even rounds, reversed in odd ones.
func inRoundOrder(units []*unit, round int) []*unit {
	if round%2 == 0 {
		return units
	}
	rev := slices.Clone(units)
	slices.Reverse(rev)
	return rev
}
