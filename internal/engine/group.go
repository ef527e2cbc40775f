package engine

import (
	"context"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// interleave measures points that share a Group: each stabilizes on its own
// (those windows are recorded, not kept), then rounds of one kept window per
// point run in plan order (A B A B …) until each has its trials, so drift
// over time hits every point of the group alike.
func (rs *runState) interleave(ctx context.Context, prs []*pointRunner) (bool, error) {
	for _, pr := range prs {
		rs.progress(Event{Kind: PointStarted, Index: pr.idx, Point: pr.p})
		if pr.p.Load.Mode == plan.LoadIterations {
			// A fixed count has no windows to alternate; run it whole.
			if interrupted, err := pr.standalone(ctx); interrupted || err != nil {
				return interrupted, err
			}
			continue
		}
		stableAt, err := pr.stabilize(ctx, false)
		if interrupted, err := pr.outcome(err); interrupted || err != nil {
			return interrupted, err
		}
		if pr.failure != nil {
			continue
		}
		if stableAt < 0 {
			pr.status = result.PointUnstable
		} else {
			pr.status = result.PointStable
		}
	}
	keep := keepCount(rs.plan.Measurement.Trials)
	for round := 0; round < keep; round++ {
		for _, pr := range prs {
			if pr.p.Load.Mode == plan.LoadIterations || pr.failure != nil {
				continue
			}
			if interrupted, err := pr.outcome(pr.round(ctx)); interrupted || err != nil {
				return interrupted, err
			}
		}
	}
	// The kept rounds are the point's trials: all of them must lie within
	// the stability band, as for a point measured on its own.
	pct := rs.plan.Measurement.StabilityPct
	for _, pr := range prs {
		if pr.p.Load.Mode == plan.LoadIterations || pr.failure != nil || pr.status != result.PointStable || len(pr.kept) == 0 {
			continue
		}
		kept := make([]result.Window, len(pr.kept))
		for i, k := range pr.kept {
			kept[i] = pr.windows[k].win
		}
		if st, _ := isStableAll(kept, pct, pr.p.Load.Async); !st {
			pr.status = result.PointUnstable
			pr.noteSpread(pr.kept[0])
		}
	}
	return false, nil
}

// round measures one kept window of an interleaved point in a session of
// its own. A window in which no request finished, neither answered nor
// failed, is passed over and the session's next window kept instead: each
// round starts a fresh session whose first requests also dial, and on a
// starved machine the first window can end before any of them returns.
// Such a window holds no measurement of the server, and as a trial it
// would leave the comparison a trial short. After maxPassedOver such
// windows in a row the round keeps what it has (the request outlasts many
// windows: the verdict then sees trials without data).
func (pr *pointRunner) round(ctx context.Context) error {
	passed := 0
	return pr.segment(ctx, func(m *measured) bool {
		if m.acc.n == 0 && m.acc.errs == 0 && passed < pr.maxPassedOver() {
			passed++
			pr.passedOver++
			return true
		}
		pr.rs.progress(Event{Kind: WindowDone, Index: pr.idx, Point: pr.p, Window: &m.win, Metrics: &m.met})
		pr.kept = append(pr.kept, len(pr.windows)-1)
		return false
	})
}

// maxPassedOver is how many empty windows in a row a round passes over:
// as many as stabilizing the point may take.
func (pr *pointRunner) maxPassedOver() int {
	return max(pr.m.MaxTrials, stabilityWindow)
}
