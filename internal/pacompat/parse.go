package pacompat

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/perfscen/perfscen/scenario"
)

// UsageError is a command line perf_analyzer itself would refuse, with its
// message (Usage("…") in command_line_parser.cc).
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// UnsupportedError is an option perf_analyzer accepts and perfscen cannot
// honour: it is named, with the reason, rather than dropped.
type UnsupportedError struct {
	Option string // as written: "--trace-level", "-d"
	Reason string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("%s is not supported by perfscen pa: %s", e.Option, e.Reason)
}

func usage(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// Parse reads a perf_analyzer command line (without the program name) as
// perf_analyzer r24.05 does: getopt_long, then each option's own checks
// (ParseCommandLine), then the checks across options (VerifyOptions), each
// failing with perf_analyzer's message. Options perfscen cannot honour
// fail with an *UnsupportedError naming them.
func Parse(argv []string) (*Params, error) {
	args, positional, err := getopt(argv)
	if err != nil {
		return nil, &UsageError{Msg: err.Error()}
	}
	if len(positional) > 0 {
		// perf_analyzer silently ignores them; a word that lost its
		// option (a value with a space in it) would measure something else.
		return nil, usage("unexpected argument %q: perf_analyzer options only (perf_analyzer ignores such words; perfscen pa refuses them, as one is usually a value that lost its option)", positional[0])
	}
	p := defaults()
	for _, a := range args {
		if reason, ok := unsupported[a.opt.key()]; ok {
			return nil, &UnsupportedError{Option: a.name(), Reason: reason}
		}
		if err := p.apply(a); err != nil {
			return nil, err
		}
		if a.eq {
			p.Notes = append(p.Notes, fmt.Sprintf("%s=%s is read as %s %s (getopt would keep the '=' in the value, which no perf_analyzer value starts with)", a.as, a.value, a.as, a.value))
		}
		p.Given = append(p.Given, a)
	}
	if p.Version {
		return p, nil
	}
	p.finishParse()
	if err := p.verify(); err != nil {
		return nil, err
	}
	if p.RequestIntervals != "" {
		iv, err := scenario.ReadIntervals(p.RequestIntervals)
		if err != nil {
			return nil, usage("Failed to parse --request-intervals. %v", err)
		}
		p.Intervals = iv
	}
	if err := p.supported(); err != nil {
		return nil, err
	}
	if err := p.settle(); err != nil {
		return nil, err
	}
	return p, nil
}

// finishParse is the tail of ParseCommandLine: defaults that depend on
// other options.
func (p *Params) finishParse() {
	if p.ServiceKind == "dynamic_grpc" && !p.given("i") {
		// A gRPC service is reached over gRPC: -i is not needed.
		p.Protocol = "grpc"
	}
	if !p.URLSpecified && p.Protocol == "grpc" {
		switch p.ServiceKind {
		case "triton":
			p.URL = "localhost:8001"
		case "tfserving":
			p.URL = "localhost:8500"
		case "dynamic_grpc":
			// perfscen's choice, the gRPC port of the other kinds.
			p.URL = "localhost:8001"
		}
	}
	if !p.MaxThreadsSpecified && p.TargetsConcurrency() {
		p.MaxThreads = 16
	}
	if p.RequestCount != 0 {
		p.MeasurementMode = "count_windows"
		p.MeasurementRequestCount = uint64(p.RequestCount)
	}
}

// intArg is std::stoi/stoull on a whole word: perf_analyzer would take
// "5s" as 5; perfscen refuses what is not a number rather than guess.
func intArg(a arg) (int64, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(a.value), 10, 64)
	if err != nil {
		return 0, invalid(a)
	}
	return v, nil
}

func floatArg(a arg) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(a.value), 64)
	if err != nil {
		return 0, invalid(a)
	}
	return v, nil
}

// invalid is perf_analyzer's message for a value std::stoi cannot read.
func invalid(a arg) error {
	return usage("Failed to parse %s. Invalid value provided: %s", a.name(), a.value)
}

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// apply handles one option as perf_analyzer's switch does.
func (p *Params) apply(a arg) error {
	v := a.value
	switch a.opt.key() {
	case "streaming":
		p.Streaming = true
	case "max-threads":
		n, err := intArg(a)
		if err != nil {
			return err
		}
		if n <= 0 {
			return usage("Failed to parse --max-threads. The value must be > 0.")
		}
		p.MaxThreads, p.MaxThreadsSpecified = int(n), true
	case "sequence-length":
		n, err := intArg(a)
		if err != nil {
			return err
		}
		if n <= 0 {
			// perf_analyzer warns and keeps its default of 20; a
			// warning scrolls by, a refusal names the flag.
			return usage("Failed to parse --sequence-length. The value must be > 0.")
		}
		p.SequenceLength, p.SequenceLengthSpecified = int(n), true
	case "percentile":
		n, err := intArg(a)
		if err != nil {
			return err
		}
		p.Percentile = int(n)
	case "data-directory":
		p.InputData = append(p.InputData, v)
	case "shape":
		return p.shape(a)
	case "measurement-interval":
		n, err := intArg(a)
		if err != nil {
			return err
		}
		if n <= 0 {
			return usage("Failed to parse --measurement-interval (-p). The value must be > 0 msec.")
		}
		p.MeasurementIntervalMs = uint64(n)
	case "concurrency-range":
		p.UsingConcurrencyRange = true
		vals := strings.Split(v, ":")
		if len(vals) > 3 {
			return usage("Failed to parse --concurrency-range. The value does not match <start:end:step>.")
		}
		for i, s := range vals {
			n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
			if err != nil {
				return invalid(a)
			}
			switch i {
			case 0:
				p.Concurrency.Start = n
			case 1:
				p.Concurrency.End = n
			case 2:
				p.Concurrency.Step = n
			}
		}
		p.Concurrency.Parts = len(vals)
	case "latency-threshold":
		n, err := intArg(a)
		if err != nil {
			return err
		}
		if n < 0 {
			return usage("Failed to parse --latency-threshold (-l). The value must be >= 0 msecs.")
		}
		p.LatencyThresholdMs = uint64(n)
	case "stability-percentage":
		f, err := floatArg(a)
		if err != nil {
			return err
		}
		if f < 0 {
			return usage("Failed to parse --stability-percentage (-s). The value must be >= 0.0.")
		}
		p.StabilityPct = f
	case "max-trials":
		n, err := intArg(a)
		if err != nil {
			return err
		}
		if n <= 0 {
			return usage("Failed to parse --max-trials (-r). The value must be > 0.")
		}
		p.MaxTrials = int(n)
	case "input-data":
		switch {
		case isDir(v) || isFile(v):
			p.InputData = append(p.InputData, v)
		case v == "zero":
			p.ZeroInput = true
		case v == "random":
		default:
			return usage("Failed to parse --input-data. Unsupported type provided: '%s'. The available options are 'zero', 'random', path to a directory, or a json file.", v)
		}
	case "string-length":
		n, err := intArg(a)
		if err != nil {
			return err
		}
		if n <= 0 {
			return usage("Failed to parse --string-length. The value must be > 0")
		}
		p.StringLength = int(n)
	case "string-data":
		p.StringData, p.StringDataOn = v, true
	case "async":
		p.Async = true
	case "sync":
		p.ForcedSync = true
	case "request-rate-range":
		p.UsingRequestRateRange = true
		vals := strings.Split(v, ":")
		if len(vals) > 3 {
			return usage("Failed to parse --request-rate-range. The value does not match <start:end:step>.")
		}
		for i, s := range vals {
			f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil {
				return invalid(a)
			}
			switch i {
			case 0:
				p.RequestRate.Start = f
			case 1:
				p.RequestRate.End = f
			case 2:
				p.RequestRate.Step = f
			}
		}
		p.RequestRate.Parts = len(vals)
	case "num-of-sequences":
		n, err := intArg(a)
		if err != nil {
			return err
		}
		if n <= 0 {
			return usage("Failed to parse --num-of-sequences. The value must be > 0.")
		}
		p.NumOfSequences, p.NumOfSequencesGiven = int(n), true
	case "binary-search":
		p.BinarySearch = true
	case "request-distribution":
		switch v {
		case "poisson", "constant":
			p.Distribution = v
		default:
			return usage("Failed to parse --request-distribution. Unsupported type provided: '%s'. Choices are 'posson' or 'constant'.", v)
		}
	case "shared-memory":
		switch v {
		case "system", "none", "cuda":
			// cuda as a perf_analyzer built with GPU support takes it
			// (load.shared_memory: cuda); the kind says at the start of
			// the run when this machine has no CUDA runtime or GPU.
			p.SharedMemory = v
		default:
			return usage("Failed to parse --shared-memory. Unsupported type provided: '%s'. The available options are 'system', 'cuda', or 'none'.", v)
		}
	case "output-shared-memory-size":
		n, err := intArg(a)
		if err != nil {
			return err
		}
		if n < 0 {
			return usage("Failed to parse --output-shared-memory-size. The value must be >= 0.")
		}
		p.OutputShmSize, p.OutputShmGiven = uint64(n), true
	case "service-kind":
		switch v {
		case "triton", "tfserving", "torchserve", "triton_c_api", "openai", "dynamic_grpc":
			p.ServiceKind = v
		default:
			return usage("Failed to parse --service-kind. Unsupported type provided: '%s'. The available options are 'triton', 'tfserving', 'torchserve', or 'triton_c_api'.", v)
		}
	case "model-signature-name":
		p.SignatureName = v
	case "triton-server-directory":
		p.TritonServerDir = v
	case "model-repository":
		p.ModelRepository = v
	case "grpc-compression-algorithm":
		switch v {
		case "none", "gzip", "deflate":
			p.Compression = v
		default:
			return usage("Failed to parse --grpc-compression-algorithm. Unsupported type provided: '%s'. The available options are 'gzip', 'deflate', or 'none'.", v)
		}
	case "measurement-mode":
		switch v {
		case "time_windows", "count_windows":
			p.MeasurementMode = v
		default:
			return usage("Failed to parse --measurement-mode. Unsupported type provided: '%s'. The available options are 'time_windows' or 'count_windows'.", v)
		}
	case "measurement-request-count":
		n, err := intArg(a)
		if err != nil {
			return err
		}
		if n <= 0 {
			return usage("Failed to parse --measurement-request-count. The value must be > 0.")
		}
		p.MeasurementRequestCount = uint64(n)
	case "ssl-grpc-use-ssl":
		p.SSL.GRPCUseSSL = true
	case "ssl-grpc-root-certifications-file":
		return fileOpt(a, &p.SSL.GRPCRootCerts)
	case "ssl-grpc-private-key-file":
		return fileOpt(a, &p.SSL.GRPCPrivateKey)
	case "ssl-grpc-certificate-chain-file":
		return fileOpt(a, &p.SSL.GRPCCertChain)
	case "ssl-https-verify-peer":
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || (n != 0 && n != 1) {
			return usage("Failed to parse --ssl-https-verify-peer. The value must be either 0 or 1.")
		}
		p.SSL.HTTPSVerifyPeer, p.SSL.HTTPSVerifyPeerGiven = n, true
	case "ssl-https-verify-host":
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 || n > 2 {
			return usage("Failed to parse --ssl-https-verify-host. The value must be either 0, 1, or 2.")
		}
		p.SSL.HTTPSVerifyHost, p.SSL.HTTPSVerifyHostGiven = n, true
	case "ssl-https-ca-certificates-file":
		return fileOpt(a, &p.SSL.HTTPSCACerts)
	case "ssl-https-client-certificate-file":
		return fileOpt(a, &p.SSL.HTTPSClientCert)
	case "ssl-https-client-certificate-type":
		if v != "PEM" && v != "DER" {
			return usage("Failed to parse --ssl-https-client-certificate-type. Unsupported type provided: '%s'. The available options are 'PEM' or 'DER'.", v)
		}
		p.SSL.HTTPSClientCertType = v
	case "ssl-https-private-key-file":
		return fileOpt(a, &p.SSL.HTTPSPrivateKey)
	case "ssl-https-private-key-type":
		if v != "PEM" && v != "DER" {
			return usage("Failed to parse --ssl-https-private-key-type. Unsupported type provided: '%s'. The available options are 'PEM' or 'DER'.", v)
		}
		p.SSL.HTTPSPrivateKeyType = v
	case "verbose-csv":
		p.VerboseCSV = true
	case "collect-metrics":
		p.Metrics = true
	case "metrics-url":
		p.MetricsURL, p.MetricsGiven = v, true
	case "metrics-interval":
		n, err := intArg(a)
		if err != nil {
			return err
		}
		if n <= 0 {
			return usage("Failed to parse --metrics-interval. The value must be > 0 msecs.")
		}
		p.MetricsMs, p.MetricsMsSet = uint64(n), true
	case "sequence-length-variation":
		f, err := floatArg(a)
		if err != nil {
			return err
		}
		p.SequenceLengthVariation, p.VariationSpecified = f, true
	case "serial-sequences":
		p.SerialSequences = true
	case "input-tensor-format", "output-tensor-format":
		if v != "binary" && v != "json" {
			return usage("Failed to parse %s. Unsupported type provided: '%s'. The available options are 'binary' or 'json'.", a.name(), v)
		}
		if a.opt.long == "input-tensor-format" {
			p.InputTensorFormat = v
		} else {
			p.OutputTensorFormat = v
		}
	case "version":
		p.Version = true
	case "endpoint":
		p.Endpoint = v
	case "grpc-method":
		p.GRPCMethod = v
	case "request-intervals":
		p.RequestIntervals = v
	case "profile-export-file":
		if isFile(v) || isDir(v) {
			return usage("Failed to parse --profile-export-file. Path must not already exist.")
		}
		p.ProfileExport = v
	case "request-count":
		n, err := intArg(a)
		if err != nil {
			return err
		}
		if n < 0 {
			return usage("Failed to parse --request-count. The value must be > 0.")
		}
		p.RequestCount = int(n)
	case "v":
		p.ExtraVerbose = p.Verbose
		p.Verbose = true
	case "z":
		p.ZeroInput = true
	case "d":
		p.UsingOldOptions, p.Dynamic = true, true
	case "u":
		p.URL, p.URLSpecified = v, true
	case "m":
		p.ModelName = v
	case "x":
		p.ModelVersion = v
	case "b":
		n, err := intArg(a)
		if err != nil {
			return err
		}
		if n <= 0 {
			return usage("Failed to parse -b (batch size). The value must be > 0.")
		}
		p.BatchSize, p.UsingBatchSize = int(n), true
	case "t":
		n, err := intArg(a)
		if err != nil {
			return err
		}
		p.UsingOldOptions, p.ConcurrentRequestCount = true, int(n)
	case "i":
		switch strings.ToLower(v) {
		case "http", "grpc":
			p.Protocol = strings.ToLower(v)
		default:
			p.Protocol = "unknown"
		}
	case "H":
		name, value, ok := strings.Cut(v, ":")
		if !ok {
			// perf_analyzer crashes here (std::out_of_range).
			return usage("Failed to parse -H. The header must be given as 'Header:Value', got '%s'.", v)
		}
		if p.Headers == nil {
			p.Headers = map[string]string{}
		}
		if _, seen := p.Headers[name]; !seen {
			p.HeaderOrder = append(p.HeaderOrder, name)
		}
		p.Headers[name] = value
	case "c":
		n, err := intArg(a)
		if err != nil {
			return err
		}
		p.UsingOldOptions, p.MaxConcurrency = true, int(n)
	case "f":
		p.File = v
	default:
		return errors.New("pacompat: no handler for " + a.name())
	}
	return nil
}

// fileOpt is an --ssl-* option naming a file that must exist.
func fileOpt(a arg, dst *string) error {
	if !isFile(a.value) {
		return usage("Failed to parse %s. The value must be a valid file path.", a.name())
	}
	*dst = a.value
	return nil
}

// shape is --shape name:d1,d2,…; the name is everything before the last
// colon, as perf_analyzer reads it.
func (p *Params) shape(a arg) error {
	i := strings.LastIndex(a.value, ":")
	if i < 0 {
		return usage("Failed to parse --shape. There must be a colon after input name.")
	}
	name, dims := a.value[:i], a.value[i+1:]
	var shape []int64
	for _, d := range strings.Split(dims, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(d), 10, 64)
		if err != nil {
			return invalid(a)
		}
		if n <= 0 {
			return usage("Failed to parse --shape. The dimensions of input tensor must be > 0.")
		}
		shape = append(shape, n)
	}
	if p.Shapes == nil {
		p.Shapes = map[string][]int64{}
	}
	if _, seen := p.Shapes[name]; !seen {
		p.ShapeOrder = append(p.ShapeOrder, name)
	}
	p.Shapes[name] = shape
	return nil
}
