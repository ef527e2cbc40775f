package runner

import (
	"context"

	"github.com/perfscen/perfscen/internal/plan"
	"github.com/perfscen/perfscen/internal/result"
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
			err := pr.segment(ctx, func(m *measured) bool {
				rs.progress(Event{Kind: WindowDone, Index: pr.idx, Point: pr.p, Window: &m.win})
				pr.kept = append(pr.kept, len(pr.windows)-1)
				return false
			})
			if interrupted, err := pr.outcome(err); interrupted || err != nil {
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
