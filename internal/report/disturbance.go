package report

import (
	"fmt"
	"sort"

	"github.com/perfscen/perfscen/internal/result"
)

// DisturbanceLine says how busy the machine was with other work during
// the run's trials, so a reader can tell a quiet run from a crowded one;
// "" when nothing was recorded.
func DisturbanceLine(run *result.Run) string {
	var other []float64
	var steal, load float64
	for i := range run.Points {
		for _, t := range run.Points[i].Trials {
			if d := t.Disturbance; d != nil {
				other = append(other, d.OtherCPU)
				steal = max(steal, d.Steal)
				load = max(load, d.Load1)
			}
		}
	}
	if len(other) == 0 {
		return ""
	}
	sort.Float64s(other)
	return fmt.Sprintf("Machine during the trials: other processes used %.0f%% of the CPUs (median; %.0f–%.0f%%), steal ≤%.0f%%, load average ≤%.1f",
		100*other[len(other)/2], 100*other[0], 100*other[len(other)-1], 100*steal, load)
}
