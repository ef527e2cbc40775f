// Package prom reads the Prometheus text exposition format that servers'
// metrics endpoints write (Triton's nv_* gauges, TorchServe's ts_*
// counters, TF Serving's histograms) into flat samples, through the
// Prometheus project's own parser.
package prom

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Sample is one value of the exposition: a counter, gauge or untyped
// value under its family's name, or a histogram's or summary's parts under
// NAME_count, NAME_sum, NAME_bucket (with an "le" label) and, for
// summaries, NAME with a "quantile" label.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// Parse reads the text format. keep, when not nil, selects the families
// to return by name; the others are parsed for validity and dropped.
func Parse(r io.Reader, keep func(name string) bool) ([]Sample, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	names := make([]string, 0, len(fams))
	for n := range fams {
		if keep == nil || keep(n) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var out []Sample
	for _, n := range names {
		out = appendFamily(out, fams[n])
	}
	return out, nil
}

func appendFamily(out []Sample, f *dto.MetricFamily) []Sample {
	name := f.GetName()
	for _, m := range f.GetMetric() {
		labels := make(map[string]string, len(m.GetLabel()))
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		with := func(k, v string) map[string]string {
			c := make(map[string]string, len(labels)+1)
			for a, b := range labels {
				c[a] = b
			}
			c[k] = v
			return c
		}
		switch {
		case m.Counter != nil:
			out = append(out, Sample{name, labels, m.GetCounter().GetValue()})
		case m.Gauge != nil:
			out = append(out, Sample{name, labels, m.GetGauge().GetValue()})
		case m.Untyped != nil:
			out = append(out, Sample{name, labels, m.GetUntyped().GetValue()})
		case m.Histogram != nil:
			h := m.GetHistogram()
			out = append(out, Sample{name + "_count", labels, float64(h.GetSampleCount())},
				Sample{name + "_sum", labels, h.GetSampleSum()})
			for _, b := range h.GetBucket() {
				out = append(out, Sample{name + "_bucket", with("le", formatFloat(b.GetUpperBound())), float64(b.GetCumulativeCount())})
			}
		case m.Summary != nil:
			s := m.GetSummary()
			out = append(out, Sample{name + "_count", labels, float64(s.GetSampleCount())},
				Sample{name + "_sum", labels, s.GetSampleSum()})
			for _, q := range s.GetQuantile() {
				out = append(out, Sample{name, with("quantile", formatFloat(q.GetQuantile())), q.GetValue()})
			}
		}
	}
	return out
}

func formatFloat(f float64) string {
	if math.IsInf(f, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// Sum adds the values of the samples named name whose labels include every
// pair of match; ok is false when none matched.
func Sum(list []Sample, name string, match map[string]string) (sum float64, ok bool) {
	for _, s := range list {
		if s.Name != name {
			continue
		}
		all := true
		for k, v := range match {
			if s.Labels[k] != v {
				all = false
				break
			}
		}
		if all {
			sum += s.Value
			ok = true
		}
	}
	return sum, ok
}
