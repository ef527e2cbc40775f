package importer

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/perfscen/perfscen/runner/result"
)

// genai-perf's profile_export_genai_perf.csv (genai_perf/export_data/
// csv_exporter.py) is a stack of tables, each headed by a row starting
// with "Metric": per-request statistics ("Metric,avg,min,max,p99,…"),
// then run totals ("Metric,Value"), then optionally GPU telemetry
// ("Metric,GPU,…"). One file is one load level, which it does not state.
const colMetric = "Metric"

// genaiStats are the request table's statistic columns perfscen keeps:
// those perf_analyzer's CSV names too, and the maximum, which only
// genai-perf writes.
var genaiStats = func() map[string]func(d *result.Distribution) *float64 {
	m := maps.Clone(distFields)
	m["max"] = func(d *result.Distribution) *float64 { return &d.MaxUs }
	return m
}()

// genaiRequestMetrics are the per-request rows perfscen has figures for,
// by genai-perf's name, all in milliseconds.
var genaiRequestMetrics = map[string]func(p *result.Point) *result.Distribution{
	"Time To First Token": func(p *result.Point) *result.Distribution { return &llm(p).TTFT },
	// genai-perf's inter-token latency is per request, (latency − TTFT) /
	// (output tokens − 1): perfscen's TPOT, not its distribution of
	// chunk gaps (docs/llm.md).
	"Inter Token Latency": func(p *result.Point) *result.Distribution { return &llm(p).TPOT },
}

// genaiRequestLatency is the end-to-end latency row; it fills the point's
// latency figures as perf_analyzer's columns do.
const genaiRequestLatency = "Request Latency"

// genaiSystemMetrics are the run-total rows perfscen has figures for.
var genaiSystemMetrics = map[string]csvCellSetter{
	"Request Throughput": func(p *result.Point, cell string) error {
		return setNumber(cell, func(v float64) { p.Summary.Throughput = v })
	},
	"Output Token Throughput": func(p *result.Point, cell string) error {
		return setNumber(cell, func(v float64) { llm(p).OutputTokensPerSec = v })
	},
	"Request Goodput": func(p *result.Point, cell string) error {
		return setNumber(cell, func(v float64) { llm(p).Goodput = &v })
	},
	"Request Count": func(p *result.Point, cell string) error {
		var n float64
		if err := setNumber(cell, func(v float64) { n = v }); err != nil {
			return err
		}
		if n != math.Trunc(n) || n > math.MaxInt64/2 {
			return fmt.Errorf("%q is not a whole count", cell)
		}
		p.Summary.Requests = int64(n)
		return nil
	},
}

// genaiRates are the units genai-perf versions give the system rows.
var genaiRates = map[string]bool{"per sec": true, "tokens/sec": true, "requests/sec": true, "count": true}

// genaiNumber is a value as genai-perf formats it: "{:,.2f}" in the
// request table (thousands separated by commas), "{:.2f}" in the others.
var genaiNumber = regexp.MustCompile(`^(\d{1,3}(,\d{3})+|\d+)(\.\d+)?$`)

func setNumber(cell string, set func(v float64)) error {
	if !genaiNumber.MatchString(cell) {
		return fmt.Errorf("%q is not a non-negative number", cell)
	}
	v, err := parseNumber(strings.ReplaceAll(cell, ",", ""))
	if err != nil {
		return err
	}
	set(v)
	return nil
}

// splitMetric splits "Time To First Token (ms)" into name and unit.
func splitMetric(s string) (name, unit string) {
	s = strings.TrimSpace(s)
	if i := strings.LastIndex(s, " ("); i > 0 && strings.HasSuffix(s, ")") {
		return s[:i], s[i+2 : len(s)-1]
	}
	return s, ""
}

// isGenAIPerf reports whether a CSV's first row is genai-perf's.
func isGenAIPerf(firstLine string) bool {
	return strings.HasPrefix(firstLine, colMetric+",")
}

// ParseGenAIPerf reads genai-perf's profile_export_genai_perf.csv into one
// point at the load level opts names (the file does not say).
func ParseGenAIPerf(name string, r io.Reader, opts Options) ([]result.Point, error) {
	if opts.Model == "" {
		return nil, fmt.Errorf("%s: a genai-perf CSV does not name its model; pass --model", name)
	}
	lv, err := optsLevel(name, opts)
	if err != nil {
		return nil, err
	}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	p := newPoint(opts.Model, lv, opts.BatchSize, opts.Protocol, "")
	p.Columns = map[string]string{}
	var (
		header  []string // the current table's header
		seen    = map[string]bool{}
		skipped []string
		latency bool
		// carriedStats are the request latency row's statistics the file
		// has a value for.
		carriedStats = map[string]bool{}
	)
	for {
		rec, line, err := readRecord(cr, name)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		rec = trimTrailingEmpty(rec)
		if strings.TrimSpace(rec[0]) == colMetric {
			header = rec
			if len(header) > 1 && header[1] == "GPU" {
				if !slices.Contains(skipped, "GPU telemetry") {
					skipped = append(skipped, "GPU telemetry")
				}
			} else if err := checkGenAIHeader(name, line, header); err != nil {
				return nil, err
			}
			continue
		}
		if header == nil {
			return nil, fmt.Errorf("%s:%d: a row before any %q header", name, line, colMetric)
		}
		if header[1] == "GPU" {
			continue
		}
		if len(rec) != len(header) {
			return nil, fmt.Errorf("%s:%d: row has %d fields, header has %d", name, line, len(rec), len(header))
		}
		metric, unit := splitMetric(rec[0])
		if metric == "" {
			return nil, fmt.Errorf("%s:%d:1: a row without a metric name", name, line)
		}
		if seen[metric] {
			return nil, fmt.Errorf("%s:%d:1: metric %q appears twice", name, line, metric)
		}
		seen[metric] = true
		keepColumns(&p, header, rec)
		if header[1] == "Value" {
			set, ok := genaiSystemMetrics[metric]
			switch {
			case !ok:
				skipped = append(skipped, rec[0])
				continue
			case !genaiRates[unit]:
				return nil, fmt.Errorf("%s:%d:1: metric %q: unit %q, want per sec", name, line, metric, unit)
			}
			if err := set(&p, strings.TrimSpace(rec[1])); err != nil {
				return nil, fmt.Errorf("%s:%d:2: %s: %w", name, line, metric, err)
			}
			continue
		}
		var d *result.Distribution
		switch pick, ok := genaiRequestMetrics[metric]; {
		case ok:
			d = pick(&p)
		case metric == genaiRequestLatency:
			d, latency = &result.Distribution{}, true
		default:
			skipped = append(skipped, rec[0])
			continue
		}
		if unit != "ms" {
			return nil, fmt.Errorf("%s:%d:1: metric %q: unit %q, want ms", name, line, metric, unit)
		}
		var min, std float64
		for i := 1; i < len(rec); i++ {
			cell := strings.TrimSpace(rec[i])
			if cell == "N/A" {
				continue
			}
			field := genaiStats[header[i]]
			switch header[i] {
			case "min":
				field = func(*result.Distribution) *float64 { return &min }
			case "std":
				field = func(*result.Distribution) *float64 { return &std }
			}
			if metric == genaiRequestLatency && field != nil {
				carriedStats[header[i]] = true
			}
			if field == nil {
				continue
			}
			if err := setNumber(cell, func(v float64) { *field(d) = v * 1000 }); err != nil {
				return nil, fmt.Errorf("%s:%d:%d: %s %s: %w", name, line, i+1, metric, header[i], err)
			}
		}
		if metric == genaiRequestLatency {
			s := &p.Summary
			s.LatencyAvgUs, s.P50Us, s.P90Us, s.P95Us, s.P99Us, s.LatencyMaxUs, s.LatencyMinUs, s.LatencyStdUs = d.AvgUs, d.P50Us, d.P90Us, d.P95Us, d.P99Us, d.MaxUs, min, std
		}
	}
	p.Summary.Absent = genaiAbsent(carriedStats, seen["Request Count"], p.Summary.LLM != nil)
	if !seen["Request Throughput"] {
		return nil, fmt.Errorf("%s: genai-perf CSV has no %q row", name, "Request Throughput (per sec)")
	}
	if !latency {
		p.Notes = append(p.Notes, "genai-perf wrote no request latency row")
	}
	p.Notes = append(p.Notes, "imported from a genai-perf CSV: figures as reported, "+
		"its inter-token latency (per request, (latency − TTFT)/(tokens − 1)) as perfscen's TPOT; "+
		"it has no distribution of chunk gaps (perfscen's ITL)")
	if len(skipped) > 0 {
		p.Notes = append(p.Notes, "no perfscen figure, kept as written in the point's columns: "+strings.Join(skipped, ", "))
	}
	if len(p.Summary.Absent) > 0 {
		p.Notes = append(p.Notes, "not in the file, so absent (not 0): "+strings.Join(p.Summary.Absent, ", "))
	}
	return []result.Point{p}, nil
}

// keepColumns keeps every cell of a row in the point's columns: a request
// table row as "Metric (unit) stat" (the sequence lengths included), a
// run-total row under its metric's name.
func keepColumns(p *result.Point, header, rec []string) {
	name := strings.TrimSpace(rec[0])
	if header[1] == "Value" {
		p.Columns[name] = strings.TrimSpace(rec[1])
		return
	}
	for i := 1; i < len(rec); i++ {
		p.Columns[name+" "+strings.TrimSpace(header[i])] = strings.TrimSpace(rec[i])
	}
}

// genaiLatencyStats maps the request latency row's statistics to the
// figures they carry.
var genaiLatencyStats = map[string]string{
	"avg": "latency_avg_us", "std": "latency_std_us", "min": "latency_min_us", "max": "latency_max_us",
	"p50": "p50_us", "p90": "p90_us", "p95": "p95_us", "p99": "p99_us",
}

// genaiAbsent lists, sorted, the figures a genai-perf CSV did not carry:
// it never splits the client's time into send/receive and wait, nor counts
// errors or token totals (only their rates); the latency figures are
// those its request latency row has a value for.
func genaiAbsent(latency map[string]bool, requests, hasLLM bool) []string {
	out := []string{"client_send_recv_us", "client_wait_us", "error_rate", "errors"}
	for stat, key := range genaiLatencyStats {
		if !latency[stat] {
			out = append(out, key)
		}
	}
	if !requests {
		out = append(out, "requests")
	}
	if hasLLM {
		// Its TTFT and per-request inter-token rows have no sample count,
		// and a maximum only where the table has a max column.
		for _, k := range []string{"input_tokens", "itl", "output_tokens", "streamed", "tokens_from_chunks", "tokens_from_usage", "ttft.count", "tpot.count"} {
			out = append(out, result.LLMAbsent+k)
		}
		if !latency["max"] {
			out = append(out, result.LLMAbsent+"ttft.max_us", result.LLMAbsent+"tpot.max_us")
		}
	}
	slices.Sort(out)
	return out
}

// checkGenAIHeader accepts a request table with genai-perf's statistic
// columns in any order, or the "Metric,Value" table.
func checkGenAIHeader(name string, line int, header []string) error {
	if len(header) == 2 && header[1] == "Value" {
		return nil
	}
	known := map[string]bool{"min": true, "std": true, "p75": true, "p25": true, "p1": true, "p5": true, "p10": true}
	seen := map[string]bool{}
	for i, h := range header[1:] {
		if _, ok := genaiStats[h]; !ok && !known[h] {
			return fmt.Errorf("%s:%d:%d: unknown genai-perf CSV column %q", name, line, i+2, h)
		}
		if seen[h] {
			return fmt.Errorf("%s:%d:%d: column %q appears twice", name, line, i+2, h)
		}
		seen[h] = true
	}
	if !seen["avg"] {
		return fmt.Errorf("%s:%d: genai-perf CSV header has no %q column", name, line, "avg")
	}
	return nil
}

// optsLevel is the load level a file that does not state one was
// measured at, from the command line.
func optsLevel(name string, opts Options) (level, error) {
	switch {
	case opts.Concurrency > 0 && opts.RequestRate > 0:
		return level{}, fmt.Errorf("%s: pass --concurrency or --request-rate, not both", name)
	case opts.Concurrency > 0:
		return level{concurrency: opts.Concurrency}, nil
	case opts.RequestRate > 0:
		return level{rate: true, requestRate: opts.RequestRate}, nil
	}
	return level{}, fmt.Errorf("%s: a genai-perf CSV does not state its load; pass --concurrency N or --request-rate R", name)
}
