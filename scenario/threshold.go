package scenario

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/perfscen/perfscen/runner/plan"
)

// metricAliases are accepted spellings besides plan.MetricNames().
var metricAliases = map[string]string{
	"latency":        plan.MetricLatencyAvg,
	"avg":            plan.MetricLatencyAvg,
	"avg_latency":    plan.MetricLatencyAvg,
	"median":         plan.MetricP50,
	"max":            plan.MetricLatencyMax,
	"max_latency":    plan.MetricLatencyMax,
	"error_count":    plan.MetricErrors,
	"queue":          plan.MetricServerQueue,
	"compute_input":  plan.MetricServerInput,
	"compute_infer":  plan.MetricServerInfer,
	"compute_output": plan.MetricServerOutput,
	"send_recv":      plan.MetricClientSendRecv,
	"wait":           plan.MetricClientWait,
}

// CanonicalMetric resolves a metric name or alias to a result metric name.
func CanonicalMetric(name string) (string, error) {
	if _, ok := plan.LookupMetric(name); ok {
		return name, nil
	}
	if c, ok := metricAliases[name]; ok {
		return c, nil
	}
	all := plan.MetricNames()
	for a := range metricAliases {
		all = append(all, a)
	}
	if s := suggest(name, all); s != "" {
		return "", fmt.Errorf("unknown metric %q%s", name, s)
	}
	return "", fmt.Errorf("unknown metric %q; known metrics: %s", name, strings.Join(plan.MetricNames(), ", "))
}

var (
	exprRE     = regexp.MustCompile(`^\s*([^\s<>=!]+)\s*(<=|>=|==|!=|=<|=>|<|>|=)\s*(.*?)\s*$`)
	quantityRE = regexp.MustCompile(`^([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*(ns|us|µs|ms|s|infer/s|tokens/s|req/s|/s|%)?$`)
)

var timeUnits = map[string]float64{"ns": 1e-3, "us": 1, "µs": 1, "ms": 1e3, "s": 1e6}

// ParseThreshold parses a threshold expression. The grammar:
//
//	threshold = metric op quantity
//	metric    = a name from plan.MetricNames() or an alias
//	            (latency, avg, max, queue, compute_infer, …)
//	op        = "<" | "<=" | ">" | ">=" | "=="
//	quantity  = number [ unit ]
//	number    = digit { digit } [ "." { digit } ] | "." digit { digit }
//	unit      = "ns" | "us" | "µs" | "ms" | "s"     (time metrics: required)
//	          | "/s" | "infer/s"                     (throughput: optional)
//	          | "%"                                  (error_rate: optional)
//
// The bound is converted to the metric's canonical unit: microseconds for
// times, inferences per second for throughput, a fraction for rates.
func ParseThreshold(expr string) (plan.Threshold, error) {
	m := exprRE.FindStringSubmatch(expr)
	if m == nil {
		return plan.Threshold{}, fmt.Errorf("%q is not a threshold (form: metric op value, e.g. \"p95 < 30ms\")", expr)
	}
	name, op, qty := m[1], m[2], m[3]
	switch op {
	case "!=", "=":
		return plan.Threshold{}, fmt.Errorf("%q: operator %q is not supported (use <, <=, >, >= or ==)", expr, op)
	case "=<":
		op = "<="
	case "=>":
		op = ">="
	}
	metric, err := CanonicalMetric(name)
	if err != nil {
		return plan.Threshold{}, fmt.Errorf("%q: %w", expr, err)
	}
	v, err := parseBound(metric, qty)
	if err != nil {
		return plan.Threshold{}, fmt.Errorf("%q: %w", expr, err)
	}
	return plan.Threshold{Text: strings.TrimSpace(expr), Metric: metric, Op: op, Value: v}, nil
}

// parseBound converts "30ms", "200/s", "1%" into metric's canonical unit.
func parseBound(metric, qty string) (float64, error) {
	q := quantityRE.FindStringSubmatch(qty)
	if q == nil {
		return 0, fmt.Errorf("%q is not a non-negative number with an optional unit (e.g. 30ms, 200/s, 1%%)", qty)
	}
	v, err := strconv.ParseFloat(q[1], 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", q[1])
	}
	unit := q[2]
	mi, _ := plan.LookupMetric(metric)
	switch mi.Unit {
	case "us":
		f, ok := timeUnits[unit]
		if !ok {
			return 0, fmt.Errorf("%s is a time: give a unit ns, us, ms or s (e.g. %sms)", metric, q[1])
		}
		return v * f, nil
	case "infer/s", "tokens/s", "req/s":
		if unit != "" && unit != "/s" && unit != mi.Unit {
			return 0, fmt.Errorf("%s is a rate in %s: unit %q does not apply", metric, mi.Unit, unit)
		}
		return v, nil
	case "fraction":
		switch unit {
		case "%":
			v /= 100
		case "":
		default:
			return 0, fmt.Errorf("%s is a fraction: write it as a percentage (1%%) or a number in [0, 1]", metric)
		}
		if v > 1 {
			return 0, fmt.Errorf("%s is a fraction: %s is above 100%%", metric, qty)
		}
		return v, nil
	default: // count
		if unit != "" {
			return 0, fmt.Errorf("%s is a count: unit %q does not apply", metric, unit)
		}
		return v, nil
	}
}
