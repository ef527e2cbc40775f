package pacompat

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/perfscen/perfscen/scenario"
)

// Scenario is the scenario a command line measures: the YAML text (each
// key commented with the flag it comes from) and, for messages about it,
// which flag each key path came from.
type Scenario struct {
	YAML []byte
	// Flags maps a key path ("models[0].shapes") to the option it came
	// from ("--shape INPUT0:16"), for errors the scenario loader finds.
	Flags map[string]string
	// Notes are things the command line asks for that the scenario holds
	// differently (printed on stderr, and written as comments).
	Notes []string
	// Sequence says the scenario sends the model sequences (correlation
	// ids with start and end flags).
	Sequence bool
}

// Equivalence settings perf_analyzer hard-codes that a scenario states.
const (
	// paTrials: perf_analyzer reports the last 3 windows, merged, once
	// they agree within the stability percentage.
	paTrials = 3
	// paTimeout: perf_analyzer waits for a reply as long as it takes; the
	// scenario's timeout must not cut a request it would have waited for.
	paTimeout = "5m"
)

// BuildScenario writes the scenario equivalent to p. file is the file it
// will be written as ("" when it is only measured, from the working
// directory): input-data paths are written relative to its folder, and
// its name tells the scenario's name apart from other lines' (see
// ScenarioName). argv is the command line, quoted in the header.
func BuildScenario(p *Params, argv []string, file string) (*Scenario, error) {
	dir := "."
	if file != "" {
		dir = filepath.Dir(file)
	}
	b := &builder{flags: map[string]string{}}
	b.line(0, "# The perf_analyzer command line")
	b.line(0, "#   perf_analyzer "+quoteArgs(argv))
	b.line(0, "# as a perfscen scenario (perfscen pa --emit-scenario). Each key names the flag it")
	b.line(0, "# comes from; keys without one state what perf_analyzer does by default.")
	b.line(0, "# Run it with: "+RunHint(p, "FILE"))
	b.line(0, "version: 1")
	b.kv(0, "name", ScenarioName(p.modelLabel(), file), "", "")

	b.line(0, "server:")
	if err := b.kind(p, dir); err != nil {
		return nil, err
	}
	b.kv(1, "timeout", paTimeout, "", "server.timeout")
	b.comment(1, "perf_analyzer waits for each reply as long as it takes")
	if len(p.HeaderOrder) > 0 {
		b.line(1, "headers:"+flagComment("-H"))
		for _, h := range p.HeaderOrder {
			b.kv(2, h, p.Headers[h], "", "server.headers")
		}
		b.flags["server.headers"] = "-H"
	}
	if err := b.tls(p, dir); err != nil {
		return nil, err
	}
	if p.Metrics {
		b.kv(1, "metrics_url", p.MetricsURL, metricsFlag(p), "server.metrics_url")
		if p.MetricsMsSet && p.MetricsMs != 1000 {
			// The scenario has no key for the scrape period: a run
			// scrapes every second, perf_analyzer's default.
			b.comment(1, fmt.Sprintf("--metrics-interval %d: perfscen pa scrapes every %d ms; a scenario scrapes every 1000 ms (perf_analyzer's default) and has no key for it", p.MetricsMs, p.MetricsMs))
			b.notes = append(b.notes, fmt.Sprintf("--metrics-interval %d is honoured by perfscen pa; the scenario has no key for it, so perfscen run scrapes every 1000 ms (perf_analyzer's default)", p.MetricsMs))
		}
	}
	switch {
	case p.ServiceKind != "triton":
	case p.InputTensorFormat == "json":
		b.kv(1, "tensor_format", "json", "--input-tensor-format/--output-tensor-format", "server.tensor_format")
	default:
		b.kv(1, "tensor_format", "binary", "", "server.tensor_format")
	}
	if p.ServiceKind == "triton" && (p.Compression == "gzip" || p.Compression == "deflate") {
		b.line(1, "kserve:")
		b.kv(2, "grpc_compression", p.Compression, "--grpc-compression-algorithm", "server.kserve.grpc_compression")
	}

	if p.ServiceKind == "openai" {
		if err := b.llm(p); err != nil {
			return nil, err
		}
	}

	b.line(0, "models:")
	if p.ModelName == "" {
		// dynamic_grpc without -m: the call is named after its method.
		b.line(1, "- name: "+scalar(p.modelLabel())+flagComment("--grpc-method (no -m: the calls are named after the method)"))
		b.flags["models[0].name"] = "--grpc-method"
	} else {
		b.line(1, "- name: "+scalar(p.ModelName)+flagComment("-m"))
		b.flags["models[0].name"] = "-m"
	}
	const m = 2
	if p.ModelVersion != "" {
		b.kv(m, "version", p.ModelVersion, "-x", "models[0].version")
	}
	if p.BatchSize != 1 || p.UsingBatchSize {
		b.kv(m, "batch_size", p.BatchSize, "-b", "models[0].batch_size")
	}
	if len(p.ShapeOrder) > 0 {
		b.line(m, "shapes:"+flagComment("--shape"))
		for _, name := range p.ShapeOrder {
			b.kv(m+1, name, flow(p.Shapes[name]), "", "")
		}
		b.flags["models[0].shapes"] = "--shape"
	}
	if err := b.inputData(p, dir); err != nil {
		return nil, err
	}
	if p.StringLength != 128 {
		b.kv(m, "string_length", p.StringLength, "--string-length", "models[0].string_length")
	}
	if p.StringDataOn {
		b.kv(m, "string_data", p.StringData, "--string-data", "models[0].string_data")
	}
	if p.SequenceModel {
		b.kv(m, "sequence", true, "the model's configuration has sequence_batching (perf_analyzer reads it there)", "models[0].sequence")
	} else if p.sequenceFlags() {
		b.kv(m, "sequence", true, "--sequence-length/--num-of-sequences/--serial-sequences", "models[0].sequence")
	}
	if p.sequences() {
		if p.SequenceLengthSpecified {
			b.kv(m, "sequence_length", p.SequenceLength, "--sequence-length", "models[0].sequence_length")
		}
		if p.SequenceLengthVariation != 0 {
			flag := "--sequence-length-variation"
			if !p.VariationSpecified {
				flag = "perf_analyzer's default --sequence-length-variation"
			}
			b.kv(m, "sequence_length_variation", p.SequenceLengthVariation, flag, "models[0].sequence_length_variation")
		}
	}

	if p.UsingOldOptions && !p.Dynamic && p.MaxConcurrency > 0 {
		b.notes = append(b.notes, fmt.Sprintf("-c %d has no effect without -d, in perf_analyzer as here: concurrency %d is measured (add -d to step up to %d, or use --concurrency-range)",
			p.MaxConcurrency, p.Concurrency.Start, p.MaxConcurrency))
	}
	if p.ProfileExport != "" {
		b.notes = append(b.notes, "--profile-export-file is written by perfscen pa; a scenario has no key for it (perfscen run writes its result JSON, with every window's figures, instead)")
	}
	if err := b.load(p, dir); err != nil {
		return nil, err
	}
	b.measurement(p)
	b.search(p)
	return &Scenario{YAML: []byte(b.out.String()), Flags: b.flags, Notes: b.notes, Sequence: p.sequences()}, nil
}

// kind writes where requests go: a Triton's URL and protocol, a
// TensorFlow Serving or TorchServe kind, or Triton in process (its C API
// library in --triton-server-directory's lib/, as perf_analyzer loads it).
func (b *builder) kind(p *Params, dir string) error {
	const kindFlag = "--service-kind"
	switch p.ServiceKind {
	case "triton_c_api":
		b.kv(1, "kind", "triton_c_api", kindFlag, "server.kind")
		b.line(1, "triton_c_api:")
		lib, err := relPath(filepath.Join(p.TritonServerDir, "lib", "libtritonserver.so"), dir)
		if err != nil {
			return err
		}
		repo, err := relPath(p.ModelRepository, dir)
		if err != nil {
			return err
		}
		b.kv(2, "library", lib, "--triton-server-directory (its lib/libtritonserver.so)", "server.triton_c_api.library")
		b.kv(2, "model_repository", repo, "--model-repository", "server.triton_c_api.model_repository")
		if p.URLSpecified {
			b.notes = append(b.notes, "-u has no effect with --service-kind=triton_c_api (in perf_analyzer either): the server runs in process")
		}
		return nil
	case "openai":
		b.kv(1, "kind", "openai", kindFlag, "server.kind")
		b.kv(1, "url", p.URL, "-u", "server.url")
		if p.Endpoint != "" {
			b.kv(1, "endpoint", p.Endpoint, "--endpoint", "server.endpoint")
		} else {
			b.kv(1, "endpoint", scenario.DefaultEndpoint, "", "server.endpoint")
		}
		return nil
	case "dynamic_grpc":
		b.kv(1, "kind", "grpc", kindFlag+"=dynamic_grpc", "server.kind")
		b.kv(1, "url", p.URL, "-u", "server.url")
		b.line(1, "grpc:")
		b.kv(2, "method", p.GRPCMethod, "--grpc-method", "server.grpc.method")
		b.comment(2, "described by the server's reflection, as perf_analyzer's dynamic gRPC client reads it")
		return nil
	case "tfserving", "torchserve":
		b.kv(1, "kind", p.ServiceKind, kindFlag, "server.kind")
	}
	b.kv(1, "url", p.URL, "-u", "server.url")
	if p.Protocol != "http" {
		b.kv(1, "protocol", p.Protocol, "-i", "server.protocol")
	} else {
		b.kv(1, "protocol", "http", "", "server.protocol")
	}
	if p.ServiceKind == "tfserving" && p.given("model-signature-name") {
		b.line(1, "tfserving:")
		b.kv(2, "signature_name", p.SignatureName, "--model-signature-name", "server.tfserving.signature_name")
	}
	return nil
}

// sequenceFlags says the command line targets a sequence model: perfscen
// needs it stated (perf_analyzer reads it from the model configuration).
func (p *Params) sequenceFlags() bool {
	return p.SequenceLengthSpecified || p.NumOfSequencesGiven || p.SerialSequences
}

type builder struct {
	out   strings.Builder
	flags map[string]string
	notes []string
}

func (b *builder) line(indent int, s string) {
	b.out.WriteString(strings.Repeat("  ", indent))
	b.out.WriteString(s)
	b.out.WriteByte('\n')
}

func (b *builder) comment(indent int, s string) { b.line(indent, "# "+s) }

// kv writes key: value, commented with the flag it came from; at names its
// path for error messages.
func (b *builder) kv(indent int, key string, v any, flag, at string) {
	b.line(indent, scalar(key)+": "+scalar(v)+flagComment(flag))
	if flag != "" && at != "" {
		b.flags[at] = flag
	}
}

func flagComment(flag string) string {
	if flag == "" {
		return ""
	}
	return "   # " + flag
}

// scalar renders v as one YAML flow value.
func scalar(v any) string {
	if s, ok := v.(rawYAML); ok {
		return string(s)
	}
	out, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(string(out), "\n")
}

// rawYAML is a value already written as YAML flow.
type rawYAML string

func flow(dims []int64) rawYAML {
	parts := make([]string, len(dims))
	for i, d := range dims {
		parts[i] = strconv.FormatInt(d, 10)
	}
	return rawYAML("[" + strings.Join(parts, ", ") + "]")
}

// ScenarioName is the name of the scenario written as file for a line
// measuring model: perf_analyzer-MODEL, and the file's name after it when
// that is not the model's (perf_analyzer-simple-sweep for sweep.yaml).
// Two lines of one model written to two files of a folder are two
// scenarios with two names, so one perfscen run takes both (scenario
// names must be distinct: they name the run's outputs and baselines).
func ScenarioName(model, file string) string {
	name := "perf_analyzer-" + nameSafe(model)
	stem := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	if file != "" && nameSafe(stem) != nameSafe(model) {
		name += "-" + nameSafe(stem)
	}
	return name
}

func nameSafe(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// RunHint is the perfscen run command line for the scenario of p written
// as file: -f's CSV is asked for with --csv, which writes perf_analyzer's
// columns (and a last Status column).
func RunHint(p *Params, file string) string {
	hint := "perfscen run " + shellWord(file)
	if p.File != "" {
		hint += " --csv " + shellWord(p.File)
	}
	return hint
}

// shellWord quotes s for a shell when it needs it.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/:=+@,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func quoteArgs(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t'\"$\\") {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		} else {
			out[i] = a
		}
	}
	return strings.Join(out, " ")
}

func metricsFlag(p *Params) string {
	if p.MetricsGiven {
		return "--collect-metrics --metrics-url"
	}
	return "--collect-metrics (perf_analyzer's default: the server's host, port 8002)"
}

// relPath writes path relative to dir when it can, absolute otherwise.
func relPath(path, dir string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return abs, nil
	}
	if rel, err := filepath.Rel(absDir, abs); err == nil && !strings.HasPrefix(rel, "..") {
		return rel, nil
	}
	return abs, nil
}

func (b *builder) inputData(p *Params, dir string) error {
	const m = 2
	switch {
	case p.ZeroInput:
		flag := "-z"
		if p.given("input-data") {
			flag = "--input-data"
		}
		b.kv(m, "input_data", "zero", flag, "models[0].input_data")
	case len(p.InputData) == 1:
		rel, err := relPath(p.InputData[0], dir)
		if err != nil {
			return err
		}
		b.kv(m, "input_data", rel, "--input-data", "models[0].input_data")
	case len(p.InputData) > 1:
		b.line(m, "input_data:"+flagComment("--input-data"))
		for _, f := range p.InputData {
			rel, err := relPath(f, dir)
			if err != nil {
				return err
			}
			b.line(m+1, "- "+scalar(rel))
		}
		b.flags["models[0].input_data"] = "--input-data"
	}
	return nil
}

func (b *builder) tls(p *Params, dir string) error {
	s := p.SSL
	if !p.tlsHTTP() && !p.tlsGRPC() {
		return nil
	}
	b.line(1, "tls:")
	b.flags["server.tls"] = "--ssl-*"
	file := func(key, path, flag string) error {
		if path == "" {
			return nil
		}
		rel, err := relPath(path, dir)
		if err != nil {
			return err
		}
		b.kv(2, key, rel, flag, "server.tls."+key)
		return nil
	}
	if p.tlsGRPC() {
		if !s.GRPCUseSSL {
			b.comment(2, "perf_analyzer uses the --ssl-grpc-* files only with --ssl-grpc-use-ssl; perfscen's tls: enables TLS")
		}
		if err := file("ca_file", s.GRPCRootCerts, "--ssl-grpc-root-certifications-file"); err != nil {
			return err
		}
		if err := file("cert_file", s.GRPCCertChain, "--ssl-grpc-certificate-chain-file"); err != nil {
			return err
		}
		if err := file("key_file", s.GRPCPrivateKey, "--ssl-grpc-private-key-file"); err != nil {
			return err
		}
		if !s.GRPCUseSSL {
			b.notes = append(b.notes, "--ssl-grpc-* files without --ssl-grpc-use-ssl: perf_analyzer would connect in plain text; perfscen connects with TLS")
		}
		return nil
	}
	if err := file("ca_file", s.HTTPSCACerts, "--ssl-https-ca-certificates-file"); err != nil {
		return err
	}
	if err := file("cert_file", s.HTTPSClientCert, "--ssl-https-client-certificate-file"); err != nil {
		return err
	}
	if err := file("key_file", s.HTTPSPrivateKey, "--ssl-https-private-key-file"); err != nil {
		return err
	}
	if s.HTTPSVerifyPeer == 0 || s.HTTPSVerifyHost == 0 {
		b.kv(2, "insecure_skip_verify", true, "--ssl-https-verify-peer 0 / --ssl-https-verify-host 0", "server.tls.insecure_skip_verify")
	}
	return nil
}

// concurrencyRange is the concurrency range the command line sweeps after
// perf_analyzer's VerifyOptions settled the deprecated options.
//
// An end below the start (--concurrency-range 10 leaves the default end 1)
// measures the start alone: perf_analyzer steps from the start while the
// level is at most the end, after measuring the start once.
func (p *Params) concurrencyLevels() (start, end, step uint64) {
	start, end = p.Concurrency.Start, p.Concurrency.End
	if end != noLimit && end < start {
		end = start
	}
	return start, end, max(p.Concurrency.Step, 1)
}

// rateLevels is concurrencyLevels for --request-rate-range.
func (p *Params) rateLevels() (start, end, step float64) {
	r := p.RequestRate
	start, end = r.Start, r.End
	if end != noLimit && end < start {
		end = start
	}
	if r.Step <= 0 {
		r.Step = 1
	}
	return start, end, r.Step
}

func (b *builder) load(p *Params, dir string) error {
	b.line(0, "load:")
	const l = 1
	rate := !p.TargetsConcurrency()
	switch {
	case p.RequestIntervals != "":
		rel, err := relPath(p.RequestIntervals, dir)
		if err != nil {
			return err
		}
		b.kv(l, "mode", "request_rate", "--request-intervals", "load.mode")
		b.kv(l, "request_intervals", rel, "--request-intervals", "load.request_intervals")
		b.comment(l, fmt.Sprintf("%d intervals, replayed in a loop: %s requests per second on average", len(p.Intervals), num(scenario.IntervalsRate(p.Intervals))))
		if p.MaxThreadsSpecified {
			b.kv(l, "max_threads", p.MaxThreads, "--max-threads", "load.max_threads")
		}
	case p.RequestCount > 0:
		b.kv(l, "mode", "iterations", "--request-count", "load.mode")
		b.kv(l, "iterations", p.RequestCount, "--request-count", "load.iterations")
		start, _, _ := p.concurrencyLevels()
		b.kv(l, "concurrency", start, concFlag(p), "load.concurrency")
	case rate:
		b.kv(l, "mode", "request_rate", "--request-rate-range", "load.mode")
		if start, end, _ := p.rateLevels(); start == end && p.LatencyThresholdMs == 0 {
			b.kv(l, "request_rate", start, "--request-rate-range", "load.request_rate")
		}
		b.kv(l, "distribution", p.Distribution, "--request-distribution", "load.distribution")
		if p.MaxThreadsSpecified {
			b.kv(l, "max_threads", p.MaxThreads, "--max-threads", "load.max_threads")
		} else if p.sequenceFlags() && p.NumOfSequencesGiven {
			b.kv(l, "max_threads", p.NumOfSequences, "--num-of-sequences (one live sequence per worker)", "load.max_threads")
		}
	default:
		b.kv(l, "mode", "concurrency", "", "load.mode")
		start, end, _ := p.concurrencyLevels()
		if start == end && p.LatencyThresholdMs == 0 {
			b.kv(l, "concurrency", start, concFlag(p), "load.concurrency")
		}
		switch {
		case p.cappedAtMaxThreads:
			b.comment(l, fmt.Sprintf("--max-threads %d: a synchronous open range (end 0) ends there, one request per thread, as in perf_analyzer", p.MaxThreads))
		case p.MaxThreadsSpecified && !p.IsAsync():
			b.comment(l, fmt.Sprintf("--max-threads %d: perf_analyzer overrides it in sync mode to reach the range's end", p.MaxThreads))
		case p.MaxThreadsSpecified:
			b.comment(l, fmt.Sprintf("--max-threads %d: perf_analyzer's threads share the outstanding requests; perfscen keeps the same number outstanding", p.MaxThreads))
		}
	}
	switch {
	case p.Async:
		b.kv(l, "async", true, "-a/--async", "load.async")
	case p.SequenceModel && !p.ForcedSync && !p.Streaming:
		b.kv(l, "async", true, "perf_analyzer calls a sequence model asynchronously unless --sync is given", "load.async")
	}
	if p.Streaming {
		b.kv(l, "streaming", true, "--streaming", "load.streaming")
	}
	if p.SharedMemory != "none" {
		b.kv(l, "shared_memory", p.SharedMemory, "--shared-memory", "load.shared_memory")
		if p.OutputShmGiven {
			b.kv(l, "output_shared_memory_size", p.OutputShmSize, "--output-shared-memory-size", "load.output_shared_memory_size")
		}
	} else if p.OutputShmGiven {
		b.notes = append(b.notes, "--output-shared-memory-size without --shared-memory has no effect (in perf_analyzer either)")
	}
	if p.LatencyThresholdMs > 0 || p.RequestCount > 0 || p.RequestIntervals != "" {
		return nil // the search, the count or the schedule sets the levels
	}
	if start, end, step := p.rateLevels(); rate && start != end {
		b.line(0, "sweep:")
		b.kv(1, "request_rate", rangeText(start, end, step), "--request-rate-range", "sweep.request_rate")
		return nil
	}
	if start, end, step := p.concurrencyLevels(); !rate && start != end {
		b.line(0, "sweep:")
		b.kv(1, "concurrency", rangeText(float64(start), float64(end), float64(step)), concFlag(p), "sweep.concurrency")
	}
	return nil
}

// modelLabel names the measured calls: -m, else (dynamic_grpc) the
// method, its slash a dot (a slash in a model name reads as a server's).
func (p *Params) modelLabel() string {
	if p.ModelName != "" || p.GRPCMethod == "" {
		return p.ModelName
	}
	return strings.ReplaceAll(strings.Trim(p.GRPCMethod, "/"), "/", ".")
}

func concFlag(p *Params) string {
	switch {
	case p.UsingConcurrencyRange:
		return "--concurrency-range"
	case p.Dynamic:
		return "-d -c (dynamic concurrency up to -c)"
	case p.UsingOldOptions && p.given("t"):
		return "-t"
	case p.UsingOldOptions:
		return "-t's default; -c without -d sets no range"
	}
	return ""
}

// given says the command line holds the option registered under key.
func (p *Params) given(key string) bool {
	for _, a := range p.Given {
		if a.opt.key() == key {
			return true
		}
	}
	return false
}

// rangeText is a range, quoted: YAML 1.1 readers take 8:128:8 for a
// base-60 number.
func rangeText(start, end, step float64) rawYAML {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	return rawYAML(strconv.Quote(f(start) + ":" + f(end) + ":" + f(step)))
}

func (b *builder) measurement(p *Params) {
	b.line(0, "measurement:")
	const l = 1
	if p.RequestCount == 0 {
		if p.MeasurementMode == "count_windows" {
			b.kv(l, "mode", "count_windows", "--measurement-mode", "measurement.mode")
			b.kv(l, "request_count", p.MeasurementRequestCount, "--measurement-request-count", "measurement.request_count")
		} else {
			b.kv(l, "window", strconv.FormatUint(p.MeasurementIntervalMs, 10)+"ms", "-p/--measurement-interval", "measurement.window")
		}
	}
	b.kv(l, "stability", strconv.FormatFloat(p.StabilityPct, 'f', -1, 64)+"%", "-s/--stability-percentage", "measurement.stability")
	b.kv(l, "max_trials", p.MaxTrials, "-r/--max-trials", "measurement.max_trials")
	if p.Percentile > 0 {
		b.kv(l, "percentile", p.Percentile, "--percentile", "measurement.percentile")
	}
	b.kv(l, "trials", paTrials, "", "measurement.trials")
	b.comment(l, "perf_analyzer reports the last 3 windows, merged, once they agree within the stability percentage")
}

// search states -l (and --binary-search) as a search: perf_analyzer stops
// its sweep at the first level whose stabilizing latency reaches the limit,
// or bisects the range for the highest level under it.
func (b *builder) search(p *Params) {
	if p.LatencyThresholdMs == 0 {
		return
	}
	rate := !p.TargetsConcurrency()
	metric := "latency_avg"
	if p.Percentile > 0 {
		metric = "p" + strconv.Itoa(p.Percentile)
	}
	b.line(0, "searches:")
	flag := "-l/--latency-threshold"
	b.line(1, "- while: "+scalar(fmt.Sprintf("%s < %dms", metric, p.LatencyThresholdMs))+flagComment(flag+" (the stabilizing latency: --percentile, else the average)"))
	b.flags["searches[0].while"] = flag
	if rate {
		start, end, step := p.rateLevels()
		b.kv(2, "request_rate", rangeText(start, end, step), "--request-rate-range", "searches[0].request_rate")
	} else {
		start, end, step := p.concurrencyLevels()
		b.kv(2, "concurrency", rangeText(float64(start), float64(end), float64(step)), concFlag(p), "searches[0].concurrency")
	}
	if p.BinarySearch {
		b.kv(2, "method", "binary", "--binary-search", "searches[0].method")
	} else {
		b.kv(2, "method", "linear", "", "searches[0].method")
		b.comment(2, "perf_analyzer's default: step up until a level reaches the limit")
	}
	b.kv(2, "decide", "merged", "", "searches[0].decide")
	b.comment(2, "perf_analyzer compares the merged windows' latency with the limit as it is; decide: interval")
	b.comment(2, "would count a level under the limit only when its confidence interval is")
}
