package scenario

import (
	"github.com/perfscen/perfscen/runner/plan"
)

func resolveMeasurement(s *Scenario, c *collector) plan.Measurement {
	in := s.Measurement
	p := path{"measurement"}
	m := plan.Measurement{
		Mode:          plan.MeasurementMode(in.Mode),
		Window:        DefaultWindow,
		RequestCount:  DefaultRequestCount,
		StabilityPct:  DefaultStabilityPct,
		MaxTrials:     DefaultMaxTrials,
		Percentile:    in.Percentile,
		Trials:        DefaultTrials,
		AllowUnstable: in.AllowUnstable,
	}
	if m.Mode == "" {
		m.Mode = plan.TimeWindows
	}
	if in.Window != "" {
		if m.Mode == plan.CountWindows {
			c.atKey(p.child("window"), "applies only with mode: time_windows (count windows end after request_count requests)")
		}
		if d, err := ParseDuration(in.Window); err != nil {
			c.at(p.child("window"), "%v", err)
		} else if d < 1e6 {
			c.at(p.child("window"), "%s is too short; a window must be at least 1ms", in.Window)
		} else {
			m.Window = d
		}
	}
	if in.RequestCount != 0 {
		if m.Mode != plan.CountWindows {
			c.atKey(p.child("request_count"), "applies only with mode: count_windows")
		}
		m.RequestCount = in.RequestCount
	}
	if in.Stability != "" {
		if v, err := ParsePercent(in.Stability, false); err != nil {
			c.at(p.child("stability"), "%v", err)
		} else if v <= 0 {
			c.at(p.child("stability"), "must be above 0%%")
		} else {
			m.StabilityPct = v
		}
	}
	if in.MaxErrorRate != "" {
		m.MaxErrorRate = parseErrorRate(in.MaxErrorRate, p.child("max_error_rate"), c)
	}
	if in.MaxTrials != 0 {
		m.MaxTrials = in.MaxTrials
	}
	if in.Trials != 0 {
		m.Trials = in.Trials
	}
	if in.Warmup != "" {
		if d, err := ParseDuration(in.Warmup); err != nil {
			c.at(p.child("warmup"), "%v", err)
		} else {
			m.Warmup = d
		}
	}
	return m
}

// parseErrorRate reads an error budget ("1%", "0.5%") as a fraction.
func parseErrorRate(s string, at path, c *collector) float64 {
	v, err := ParsePercent(s, false)
	if err != nil {
		c.at(at, "%v", err)
		return 0
	}
	if v > 100 {
		c.at(at, "%s is more than 100%%", s)
		return 0
	}
	return v / 100
}
