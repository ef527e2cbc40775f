package pacompat

import "time"

// Params are a perf_analyzer command line's settings, with perf_analyzer's
// defaults (command_line_parser.h, PerfAnalyzerParameters) and its
// "specified" markers where its rules depend on them.
type Params struct {
	Verbose, ExtraVerbose bool
	Version               bool

	ModelName    string
	ModelVersion string
	ServiceKind  string // triton, tfserving, torchserve, triton_c_api, openai, dynamic_grpc
	// GRPCMethod is dynamic_grpc's --grpc-method, package.Service/Method.
	GRPCMethod string

	URL          string
	URLSpecified bool
	Protocol     string // http or grpc

	BatchSize      int
	UsingBatchSize bool

	// Load.
	UsingConcurrencyRange bool
	Concurrency           Range[uint64]
	UsingRequestRateRange bool
	RequestRate           Range[float64]
	Distribution          string // constant or poisson
	RequestIntervals      string
	// Intervals are --request-intervals' file read: the gaps between
	// consecutive sends, in microseconds, replayed in a loop.
	Intervals           []time.Duration
	RequestCount        int
	MaxThreads          int
	MaxThreadsSpecified bool
	Async, ForcedSync   bool
	Streaming           bool

	// Deprecated load options (-t, -c, -d).
	UsingOldOptions        bool
	ConcurrentRequestCount int
	MaxConcurrency         int
	Dynamic                bool

	// Searches along the load range.
	LatencyThresholdMs uint64 // 0: no limit
	BinarySearch       bool

	// Measurement.
	MeasurementMode         string // time_windows or count_windows
	MeasurementIntervalMs   uint64
	MeasurementRequestCount uint64
	StabilityPct            float64
	MaxTrials               int
	Percentile              int // -1: average latency

	// Input data.
	InputData    []string // files or directories, in order
	ZeroInput    bool
	Shapes       map[string][]int64
	ShapeOrder   []string
	StringLength int
	StringData   string
	StringDataOn bool

	SharedMemory   string // none, system, cuda
	OutputShmSize  uint64
	OutputShmGiven bool

	InputTensorFormat, OutputTensorFormat string

	// Sequences.
	SequenceLength          int
	SequenceLengthSpecified bool
	SequenceLengthVariation float64
	VariationSpecified      bool
	NumOfSequences          int
	NumOfSequencesGiven     bool
	SequenceIDRange         string
	SerialSequences         bool
	// SequenceModel says the model's configuration has a sequence batcher
	// (set by SetSequenceModel once the server said so).
	SequenceModel bool

	// cappedAtMaxThreads says settle ended an open concurrency range
	// (end 0) at MaxThreads, as perf_analyzer does in sync mode.
	cappedAtMaxThreads bool
	// Notes are what perfscen pa reads differently from getopt, said on
	// stderr.
	Notes []string
	// Warnings are what perf_analyzer prints on stderr about the command
	// line as it settles it against the model (perf_analyzer.cc).
	Warnings []string

	// Server.
	Headers      map[string]string
	HeaderOrder  []string
	Compression  string // none, gzip, deflate; "" not given
	SSL          SSL
	MetricsURL   string
	MetricsGiven bool
	Metrics      bool
	MetricsMs    uint64
	MetricsMsSet bool

	// Reports.
	File             string
	VerboseCSV       bool
	ProfileExport    string
	TritonServerDir  string
	ModelRepository  string
	BLSComposing     string
	SignatureName    string
	PeriodicRange    string
	RequestPeriod    string
	RequestParameter []string
	Endpoint         string
	TraceOptions     []string
	EnableMPI        bool

	// Given lists every option as the user wrote it, in order, so the
	// emitted scenario can quote the command line it came from.
	Given []arg
}

// SSL are perf_analyzer's --ssl-* options.
type SSL struct {
	GRPCUseSSL           bool
	GRPCRootCerts        string
	GRPCPrivateKey       string
	GRPCCertChain        string
	HTTPSVerifyPeer      int
	HTTPSVerifyHost      int
	HTTPSCACerts         string
	HTTPSClientCert      string
	HTTPSClientCertType  string
	HTTPSPrivateKey      string
	HTTPSPrivateKeyType  string
	HTTPSVerifyPeerGiven bool
	HTTPSVerifyHostGiven bool
}

// Range is perf_analyzer's start:end:step.
type Range[T uint64 | float64] struct {
	Start, End, Step T
	// Parts is how many of start, end and step were written.
	Parts int
}

// noLimit is perf_analyzer's NO_LIMIT: an end of 0 searches upwards until
// the latency threshold is met.
const noLimit = 0

func defaults() *Params {
	return &Params{
		ServiceKind:             "triton",
		URL:                     "localhost:8000",
		Protocol:                "http",
		BatchSize:               1,
		Concurrency:             Range[uint64]{Start: 1, End: 1, Step: 1},
		RequestRate:             Range[float64]{Start: 1, End: 1, Step: 1},
		Distribution:            "constant",
		MaxThreads:              4,
		ConcurrentRequestCount:  1,
		MeasurementMode:         "time_windows",
		MeasurementIntervalMs:   5000,
		MeasurementRequestCount: 50,
		StabilityPct:            10,
		MaxTrials:               10,
		Percentile:              -1,
		StringLength:            128,
		SharedMemory:            "none",
		OutputShmSize:           100 * 1024,
		InputTensorFormat:       "binary",
		OutputTensorFormat:      "binary",
		SequenceLength:          20,
		SequenceLengthVariation: 20,
		NumOfSequences:          4,
		MetricsURL:              "localhost:8002/metrics",
		MetricsMs:               1000,
		SSL:                     SSL{HTTPSVerifyPeer: 1, HTTPSVerifyHost: 2, HTTPSClientCertType: "PEM", HTTPSPrivateKeyType: "PEM"},
		TritonServerDir:         "/opt/tritonserver",
		SignatureName:           "serving_default",
	}
}

// TargetsConcurrency is perf_analyzer's targeting_concurrency(): the load
// is a concurrency level unless a request rate or intervals are asked for.
func (p *Params) TargetsConcurrency() bool {
	return p.UsingConcurrencyRange || p.UsingOldOptions || !(p.UsingRequestRateRange || p.RequestIntervals != "")
}
