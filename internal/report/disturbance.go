package report

import (
	"fmt"
	"sort"

	"github.com/perfscen/perfscen/runner/result"
)

// DisturbanceLine says how busy the machine was with other work during
// the run's trials, and how much of that contention perfscen itself met,
// so a reader can tell a quiet run from a crowded one; "" when nothing was
// recorded.
func DisturbanceLine(run *result.Run) string {
	var other, wait, press []float64
	var steal, load float64
	for i := range run.Points {
		for _, t := range run.Points[i].Trials {
			if d := t.Disturbance; d != nil {
				other = append(other, d.OtherCPU)
				steal = max(steal, d.Steal)
				load = max(load, d.Load1)
				if d.RunQueueWait != nil {
					wait = append(wait, *d.RunQueueWait)
				}
				if d.CPUPressure != nil {
					press = append(press, *d.CPUPressure)
				}
			}
		}
	}
	if len(other) == 0 {
		return ""
	}
	med, rng := spread(other)
	line := fmt.Sprintf("Machine during the trials: other processes used %s of the CPUs %s, steal ≤%.0f%%, load average ≤%.1f",
		med, rng, 100*steal, load)
	if len(wait) > 0 {
		med, rng := spread(wait)
		line += fmt.Sprintf("; perfscen's threads waited %s %s of their CPU time in the run queue", med, rng)
	}
	if len(press) > 0 {
		med, rng := spread(press)
		line += fmt.Sprintf("; CPU pressure %s %s of the time", med, rng)
	}
	return line
}

// spread renders shares as their median ("12%") and range
// ("(median; 5–30%)").
func spread(vs []float64) (med, rng string) {
	sort.Float64s(vs)
	return fmt.Sprintf("%.0f%%", 100*vs[len(vs)/2]), fmt.Sprintf("(median; %.0f–%.0f%%)", 100*vs[0], 100*vs[len(vs)-1])
}
