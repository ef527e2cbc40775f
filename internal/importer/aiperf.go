package importer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/perfscen/perfscen/internal/jsonpos"
	"github.com/perfscen/perfscen/internal/stats"
	"github.com/perfscen/perfscen/runner/result"
)

// AIPerf (NVIDIA's successor to genai-perf) writes, per run,
// profile_export_aiperf.json (every metric's statistics: unit, avg, p1 …
// p99, min, max, std) and profile_export.jsonl (one record per request:
// metadata with its timestamps and turn, metrics as {value, unit}, and
// error), per its docs/tutorials/working-with-profile-exports.md and
// aiperf/common/models/export_models.py. Either becomes one LLM point.

// aiperfStat is one metric of the aggregate export.
type aiperfStat struct {
	Unit string   `json:"unit"`
	Avg  *float64 `json:"avg"`
	P50  *float64 `json:"p50"`
	P90  *float64 `json:"p90"`
	P95  *float64 `json:"p95"`
	P99  *float64 `json:"p99"`
	Min  *float64 `json:"min"`
	Max  *float64 `json:"max"`
	Std  *float64 `json:"std"`
}

// isAIPerf tells the two exports apart from perf_analyzer's and
// genai-perf's text: a JSON document. The records file's first line is a
// whole record with metadata.
func isAIPerf(b []byte) (format string, ok bool) {
	t := bytes.TrimSpace(b)
	if len(t) == 0 || t[0] != '{' {
		return "", false
	}
	first, _, _ := bytes.Cut(t, []byte("\n"))
	var rec struct {
		Metadata json.RawMessage `json:"metadata"`
	}
	if json.Unmarshal(first, &rec) == nil && rec.Metadata != nil {
		return FormatAIPerfRecords, true
	}
	return FormatAIPerfJSON, true
}

// usPer converts a time unit AIPerf writes to microseconds.
func usPer(unit string) (float64, bool) {
	switch strings.ToLower(unit) {
	case "ns":
		return 1e-3, true
	case "us", "µs":
		return 1, true
	case "ms":
		return 1e3, true
	case "s", "sec", "seconds":
		return 1e6, true
	}
	return 0, false
}

// aiperfTimes maps the aggregate's time metrics to the distribution they
// fill: TTFT, and its per-request inter-token latency, perfscen's TPOT.
var aiperfTimes = map[string]func(l *result.LLMMetrics) *result.Distribution{
	"time_to_first_token": func(l *result.LLMMetrics) *result.Distribution { return &l.TTFT },
	"inter_token_latency": func(l *result.LLMMetrics) *result.Distribution { return &l.TPOT },
}

// ParseAIPerfJSON reads profile_export_aiperf.json into one point. The
// model and load come from its input_config when it names them, else from
// opts.
func ParseAIPerfJSON(name string, b []byte, opts Options) ([]result.Point, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", where(name, b, err), err)
	}
	opts = aiperfConfig(doc, opts)
	if opts.Model == "" {
		return nil, fmt.Errorf("%s: the export names no model (input_config.endpoint.model_names); pass --model", name)
	}
	lv, err := optsLevel(name, opts)
	if err != nil {
		return nil, fmt.Errorf("%w (or an export whose input_config.loadgen states it)", err)
	}
	p := newPoint(opts.Model, lv, opts.BatchSize, opts.Protocol, "")
	p.Columns = map[string]string{}
	l := &result.LLMMetrics{}
	s := &p.Summary
	stat := func(key string) (*aiperfStat, error) {
		raw := doc[key]
		var probe map[string]json.RawMessage
		if json.Unmarshal(raw, &probe) != nil || probe["unit"] == nil {
			return nil, nil // not a metric: a version, the config, a status
		}
		var st aiperfStat
		if err := json.Unmarshal(raw, &st); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", at(name, b, key), key, err)
		}
		return &st, nil
	}
	need := func(key string, st *aiperfStat) (float64, error) {
		if st.Avg == nil {
			return 0, fmt.Errorf("%s: %s: no avg", at(name, b, key), key)
		}
		return *st.Avg, nil
	}
	var skipped []string
	keys := make([]string, 0, len(doc))
	for k := range doc {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	seen := map[string]bool{}
	for _, key := range keys {
		st, err := stat(key)
		if err != nil {
			return nil, err
		}
		if st == nil || st.Unit == "" {
			continue // configuration, status and telemetry sections
		}
		keepStat(&p, key, st)
		seen[key] = true
		switch key {
		case "request_throughput", "output_token_throughput", "goodput":
			v, err := need(key, st)
			if err != nil {
				return nil, err
			}
			if !strings.Contains(st.Unit, "/s") {
				return nil, fmt.Errorf("%s: %s: unit %q, want a rate per second", at(name, b, key), key, st.Unit)
			}
			switch key {
			case "request_throughput":
				s.Throughput = v
			case "output_token_throughput":
				l.OutputTokensPerSec = v
			default:
				l.Goodput = &v
			}
		case "request_count", "error_request_count", "total_osl", "total_isl":
			v, err := need(key, st)
			if err != nil {
				return nil, err
			}
			switch key {
			case "request_count":
				s.Requests = int64(v)
			case "error_request_count":
				s.Errors = int64(v)
			case "total_osl":
				l.OutputTokens = int64(v)
			default:
				l.InputTokens = int64(v)
			}
		case "request_latency", "time_to_first_token", "inter_token_latency":
			k, ok := usPer(st.Unit)
			if !ok {
				return nil, fmt.Errorf("%s: %s: unit %q is not a time", at(name, b, key), key, st.Unit)
			}
			d := statDist(st, k)
			if key == "request_latency" {
				s.LatencyAvgUs, s.P50Us, s.P90Us, s.P95Us, s.P99Us, s.LatencyMaxUs = d.AvgUs, d.P50Us, d.P90Us, d.P95Us, d.P99Us, d.MaxUs
				if st.Min != nil {
					s.LatencyMinUs = *st.Min * k
				}
				if st.Std != nil {
					s.LatencyStdUs = *st.Std * k
				}
				continue
			}
			*aiperfTimes[key](l) = d
		default:
			skipped = append(skipped, key)
		}
	}
	if !seen["request_throughput"] {
		return nil, fmt.Errorf("%s: an AIPerf export needs request_throughput", name)
	}
	if tot := s.Requests + s.Errors; tot > 0 {
		s.ErrorRate = float64(s.Errors) / float64(tot)
	}
	s.LLM = l
	s.Absent = aiperfAbsent(seen)
	p.Notes = append(p.Notes, "imported from AIPerf's profile_export_aiperf.json: figures as reported, "+
		"its inter-token latency (per request, (latency − TTFT)/(tokens − 1)) as perfscen's TPOT")
	if len(skipped) > 0 {
		p.Notes = append(p.Notes, "no perfscen figure, kept as written in the point's columns: "+strings.Join(skipped, ", "))
	}
	if len(s.Absent) > 0 {
		p.Notes = append(p.Notes, "not in the file, so absent (not 0): "+strings.Join(s.Absent, ", "))
	}
	return []result.Point{p}, nil
}

// keepStat keeps every statistic of an aggregate metric in the point's
// columns, as "metric (unit) stat".
func keepStat(p *result.Point, key string, st *aiperfStat) {
	for _, f := range []struct {
		name string
		v    *float64
	}{{"avg", st.Avg}, {"p50", st.P50}, {"p90", st.P90}, {"p95", st.P95}, {"p99", st.P99}, {"min", st.Min}, {"max", st.Max}, {"std", st.Std}} {
		if f.v != nil {
			p.Columns[key+" ("+st.Unit+") "+f.name] = strconv.FormatFloat(*f.v, 'g', -1, 64)
		}
	}
}

func statDist(st *aiperfStat, k float64) result.Distribution {
	var d result.Distribution
	for _, f := range []struct {
		v   *float64
		dst *float64
	}{{st.Avg, &d.AvgUs}, {st.P50, &d.P50Us}, {st.P90, &d.P90Us}, {st.P95, &d.P95Us}, {st.P99, &d.P99Us}, {st.Max, &d.MaxUs}} {
		if f.v != nil {
			*f.dst = *f.v * k
		}
	}
	return d
}

// aiperfAbsent lists what the aggregate export does not carry: the
// client's split, per-request counts behind the distributions, where token
// counts came from, and any metric it had no row for.
func aiperfAbsent(seen map[string]bool) []string {
	out := []string{"client_send_recv_us", "client_wait_us"}
	if !seen["request_count"] {
		out = append(out, "requests")
	}
	if !seen["error_request_count"] {
		// AIPerf leaves error_request_count out when nothing failed.
		out = append(out, "errors", "error_rate")
	}
	if !seen["request_latency"] {
		out = append(out, "latency_avg_us", "p50_us", "p90_us", "p95_us", "p99_us", "latency_max_us", "latency_min_us", "latency_std_us")
	}
	for _, k := range []string{"itl", "streamed", "tokens_from_chunks", "tokens_from_usage", "ttft.count", "tpot.count"} {
		out = append(out, result.LLMAbsent+k)
	}
	if !seen["total_osl"] {
		out = append(out, result.LLMAbsent+"output_tokens")
	}
	if !seen["total_isl"] {
		out = append(out, result.LLMAbsent+"input_tokens")
	}
	slices.Sort(out)
	return out
}

// aiperfConfig fills the model and load opts leave unset from the
// export's input_config (endpoint.model_names, loadgen.concurrency or
// request_rate), which AIPerf notes is not a stable format: what it does
// not hold, or holds in another shape, is simply not used.
func aiperfConfig(doc map[string]json.RawMessage, opts Options) Options {
	var cfg struct {
		Endpoint struct {
			ModelNames []string `json:"model_names"`
		} `json:"endpoint"`
		Loadgen struct {
			Concurrency *int     `json:"concurrency"`
			RequestRate *float64 `json:"request_rate"`
		} `json:"loadgen"`
	}
	if json.Unmarshal(doc["input_config"], &cfg) != nil {
		return opts
	}
	if opts.Model == "" && len(cfg.Endpoint.ModelNames) == 1 {
		opts.Model = cfg.Endpoint.ModelNames[0]
	}
	if opts.Concurrency == 0 && opts.RequestRate == 0 {
		switch {
		case cfg.Loadgen.RequestRate != nil && *cfg.Loadgen.RequestRate > 0:
			opts.RequestRate = *cfg.Loadgen.RequestRate
		case cfg.Loadgen.Concurrency != nil && *cfg.Loadgen.Concurrency > 0:
			opts.Concurrency = *cfg.Loadgen.Concurrency
		}
	}
	return opts
}

// aiperfRecord is one line of profile_export.jsonl.
type aiperfRecord struct {
	Metadata struct {
		TurnIndex      *int    `json:"turn_index"`
		RequestStartNs *int64  `json:"request_start_ns"`
		RequestEndNs   *int64  `json:"request_end_ns"`
		BenchmarkPhase *string `json:"benchmark_phase"`
	} `json:"metadata"`
	Metrics map[string]aiperfValue `json:"metrics"`
	Error   json.RawMessage        `json:"error"`
}

// aiperfValue is a record's metric: a number or (inter_chunk_latency) a
// list, and its unit.
type aiperfValue struct {
	Value json.RawMessage `json:"value"`
	Unit  string          `json:"unit"`
}

// ParseAIPerfRecords reads profile_export.jsonl, one request a line, into
// one point whose distributions are computed from the requests (their
// counts known): request latency, TTFT, the per-request inter-token
// latency (TPOT) and the inter-chunk gaps (ITL), TTFT by turn, token
// totals, and throughput over the span from the first request's start to
// the last one's end. Records of another phase than profiling (warm-up)
// are left out.
func ParseAIPerfRecords(name string, b []byte, opts Options) ([]result.Point, error) {
	if opts.Model == "" {
		return nil, fmt.Errorf("%s: AIPerf's records name no model; pass --model", name)
	}
	lv, err := optsLevel(name, opts)
	if err != nil {
		return nil, err
	}
	var (
		lat, ttft, tpot, itl []float64
		turns                = map[int][]float64{}
		turnIn               = map[int]int64{}
		turnN                = map[int]int64{}
		ok, failed, warm     int64
		outTok, inTok        int64
		first, last          int64 = math.MaxInt64, math.MinInt64
	)
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for n := 1; sc.Scan(); n++ {
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		var r aiperfRecord
		if err := json.Unmarshal(raw, &r); err != nil {
			if _, col, ok := jsonpos.Of(raw, err); ok {
				return nil, fmt.Errorf("%s:%d:%d: %w", name, n, col, err)
			}
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		md := r.Metadata
		if md.BenchmarkPhase != nil && *md.BenchmarkPhase != "profiling" {
			warm++
			continue
		}
		if md.RequestStartNs == nil || md.RequestEndNs == nil || *md.RequestEndNs < *md.RequestStartNs {
			return nil, fmt.Errorf("%s:%d: metadata: a record needs request_start_ns and request_end_ns, the end not before the start", name, n)
		}
		first, last = min(first, *md.RequestStartNs), max(last, *md.RequestEndNs)
		if len(r.Error) > 0 && string(r.Error) != "null" {
			failed++
			continue
		}
		ok++
		num := func(key string) (float64, bool, error) {
			v, has := r.Metrics[key]
			if !has {
				return 0, false, nil
			}
			var x float64
			if err := json.Unmarshal(v.Value, &x); err != nil || math.IsNaN(x) || x < 0 {
				return 0, false, fmt.Errorf("%s:%d: metrics.%s: value %s is not a number ≥ 0", name, n, key, v.Value)
			}
			return x, true, nil
		}
		timeOf := func(key string) (float64, bool, error) {
			x, has, err := num(key)
			if !has || err != nil {
				return 0, has, err
			}
			k, okUnit := usPer(r.Metrics[key].Unit)
			if !okUnit {
				return 0, false, fmt.Errorf("%s:%d: metrics.%s: unit %q is not a time", name, n, key, r.Metrics[key].Unit)
			}
			return x * k, true, nil
		}
		for _, m := range []struct {
			key  string
			dst  *[]float64
			time bool
		}{{"request_latency", &lat, true}, {"time_to_first_token", &ttft, true}, {"inter_token_latency", &tpot, true}} {
			v, has, err := timeOf(m.key)
			if err != nil {
				return nil, err
			}
			if has {
				*m.dst = append(*m.dst, v)
			}
		}
		if v, has := r.Metrics["inter_chunk_latency"]; has {
			var gaps []float64
			k, okUnit := usPer(v.Unit)
			if err := json.Unmarshal(v.Value, &gaps); err != nil || !okUnit {
				return nil, fmt.Errorf("%s:%d: metrics.inter_chunk_latency: want a list of times, have %s %q", name, n, v.Value, v.Unit)
			}
			for _, g := range gaps {
				itl = append(itl, g*k)
			}
		}
		for _, key := range []string{"output_sequence_length", "output_token_count"} {
			v, has, err := num(key)
			if err != nil {
				return nil, err
			}
			if has {
				outTok += int64(v)
				break
			}
		}
		in, hasIn, err := num("input_sequence_length")
		if err != nil {
			return nil, err
		}
		inTok += int64(in)
		if md.TurnIndex != nil {
			t := *md.TurnIndex + 1
			turnN[t]++
			if hasIn {
				turnIn[t] += int64(in)
			}
			if v, has, _ := timeOf("time_to_first_token"); has {
				turns[t] = append(turns[t], v)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if ok+failed == 0 {
		return nil, fmt.Errorf("%s: no profiling records", name)
	}
	p := newPoint(opts.Model, lv, opts.BatchSize, opts.Protocol, "")
	s := &p.Summary
	s.Requests, s.Errors = ok, failed
	s.ErrorRate = float64(failed) / float64(ok+failed)
	span := float64(last-first) / 1e9
	if span > 0 {
		s.Throughput = float64(ok) / span
	}
	if d := sampleDist(lat); d.Count > 0 {
		s.LatencyAvgUs, s.P50Us, s.P90Us, s.P95Us, s.P99Us, s.LatencyMaxUs = d.AvgUs, d.P50Us, d.P90Us, d.P95Us, d.P99Us, d.MaxUs
		slices.Sort(lat)
		s.LatencyMinUs = lat[0]
		_, s.LatencyStdUs = stats.MeanSD(lat)
	}
	l := &result.LLMMetrics{Streamed: int64(len(ttft)), TTFT: sampleDist(ttft), TPOT: sampleDist(tpot), ITL: sampleDist(itl),
		OutputTokens: outTok, InputTokens: inTok, TokensFromUsage: ok}
	if span > 0 {
		l.OutputTokensPerSec = float64(outTok) / span
	}
	var ks []int
	for t := range turnN {
		ks = append(ks, t)
	}
	sort.Ints(ks)
	if len(ks) > 1 {
		for _, t := range ks {
			l.Turns = append(l.Turns, result.TurnMetrics{Turn: t, Requests: turnN[t], TTFT: sampleDist(turns[t]), InputTokens: turnIn[t]})
		}
	}
	s.LLM = l
	s.Absent = []string{"client_send_recv_us", "client_wait_us"}
	p.Notes = append(p.Notes, fmt.Sprintf("imported from AIPerf's profile_export.jsonl: %d requests (%d failed), figures computed from the records; "+
		"token counts as AIPerf counted them (its tokenizer), its inter-token latency (per request) as perfscen's TPOT, its inter-chunk latency as perfscen's ITL", ok+failed, failed))
	if warm > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("%d warm-up record(s) left out", warm))
	}
	return []result.Point{p}, nil
}

// sampleDist summarises a sample: mean, linearly interpolated percentiles
// (as AIPerf's own aggregate computes them) and maximum.
func sampleDist(xs []float64) result.Distribution {
	if len(xs) == 0 {
		return result.Distribution{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	mean, _ := stats.MeanSD(s)
	return result.Distribution{Count: int64(len(s)), AvgUs: mean, P50Us: stats.QuantileSorted(s, 0.5), P90Us: stats.QuantileSorted(s, 0.9),
		P95Us: stats.QuantileSorted(s, 0.95), P99Us: stats.QuantileSorted(s, 0.99), MaxUs: s[len(s)-1]}
}

// where turns a decoding error's offset into file:line:col.
func where(name string, b []byte, err error) string {
	if line, col, ok := jsonpos.Of(b, err); ok {
		return fmt.Sprintf("%s:%d:%d", name, line, col)
	}
	return name
}

// at names the line of a top-level key's value.
func at(name string, b []byte, key string) string {
	if line, col, ok := jsonpos.Find(b, key); ok {
		return fmt.Sprintf("%s:%d:%d", name, line, col)
	}
	return name
}
