package pacompat

// options is perf_analyzer r24.05's option table (command_line_parser.cc:
// long_options and the short option string), one entry per flag; where a
// short and a long spelling share a handler they share an entry.
var options = []option{
	{long: "streaming"},
	{long: "max-threads", hasArg: true},
	{long: "sequence-length", hasArg: true},
	{long: "percentile", hasArg: true},
	{long: "data-directory", hasArg: true},
	{long: "shape", hasArg: true},
	{long: "measurement-interval", short: 'p', hasArg: true},
	{long: "concurrency-range", hasArg: true},
	{long: "latency-threshold", short: 'l', hasArg: true},
	{long: "stability-percentage", short: 's', hasArg: true},
	{long: "max-trials", short: 'r', hasArg: true},
	{long: "input-data", hasArg: true},
	{long: "string-length", hasArg: true},
	{long: "string-data", hasArg: true},
	{long: "async", short: 'a'},
	{long: "sync"},
	{long: "request-rate-range", hasArg: true},
	{long: "num-of-sequences", hasArg: true},
	{long: "binary-search"},
	{long: "request-distribution", hasArg: true},
	{long: "request-intervals", hasArg: true},
	{long: "shared-memory", hasArg: true},
	{long: "output-shared-memory-size", hasArg: true},
	{long: "service-kind", hasArg: true},
	{long: "model-signature-name", hasArg: true},
	{long: "grpc-compression-algorithm", hasArg: true},
	{long: "measurement-mode", hasArg: true},
	{long: "measurement-request-count", hasArg: true},
	{long: "triton-server-directory", hasArg: true},
	{long: "model-repository", hasArg: true},
	{long: "sequence-id-range", hasArg: true},
	{long: "ssl-grpc-use-ssl"},
	{long: "ssl-grpc-root-certifications-file", hasArg: true},
	{long: "ssl-grpc-private-key-file", hasArg: true},
	{long: "ssl-grpc-certificate-chain-file", hasArg: true},
	{long: "ssl-https-verify-peer", hasArg: true},
	{long: "ssl-https-verify-host", hasArg: true},
	{long: "ssl-https-ca-certificates-file", hasArg: true},
	{long: "ssl-https-client-certificate-file", hasArg: true},
	{long: "ssl-https-client-certificate-type", hasArg: true},
	{long: "ssl-https-private-key-file", hasArg: true},
	{long: "ssl-https-private-key-type", hasArg: true},
	{long: "verbose-csv"},
	{long: "enable-mpi"},
	{long: "trace-level", hasArg: true},
	{long: "trace-rate", hasArg: true},
	{long: "trace-count", hasArg: true},
	{long: "log-frequency", hasArg: true},
	{long: "collect-metrics"},
	{long: "metrics-url", hasArg: true},
	{long: "metrics-interval", hasArg: true},
	{long: "sequence-length-variation", hasArg: true},
	{long: "bls-composing-models", hasArg: true},
	{long: "serial-sequences"},
	{long: "input-tensor-format", hasArg: true},
	{long: "output-tensor-format", hasArg: true},
	{long: "version"},
	{long: "profile-export-file", hasArg: true},
	{long: "periodic-concurrency-range", hasArg: true},
	{long: "request-period", hasArg: true},
	{long: "request-parameter", hasArg: true},
	{long: "endpoint", hasArg: true},
	// --grpc-method came with the dynamic_grpc service kind, after r24.05.
	{long: "grpc-method", hasArg: true},
	{long: "request-count", hasArg: true},
	{short: 'v'},
	{short: 'd'},
	{short: 'z'},
	{short: 'c', hasArg: true},
	{short: 'u', hasArg: true},
	{short: 'm', hasArg: true},
	{short: 'x', hasArg: true},
	{short: 'b', hasArg: true},
	{short: 't', hasArg: true},
	{short: 'i', hasArg: true},
	{short: 'H', hasArg: true},
	{short: 'f', hasArg: true},
}

// key is the name a handler is registered under: the long name, else the
// short letter.
func (o *option) key() string {
	if o.long != "" {
		return o.long
	}
	return string(o.short)
}

// unsupported names the options perfscen refuses and why: each asks for
// something perfscen does not do, and running without it would measure
// something else than the script says.
var unsupported = map[string]string{
	"periodic-concurrency-range": "perfscen has no periodic concurrency mode; a scenario's load.stages ramps concurrency over time",
	"request-period":             "it belongs to --periodic-concurrency-range, which perfscen does not have",
	"request-parameter":          "perfscen sends no custom request parameters",
	"bls-composing-models":       "perfscen reports the server statistics of the measured model only",
	"enable-mpi":                 "perfscen has no multi-model MPI mode; a scenario measures several models in one run",
	"trace-level":                "perfscen does not change the server's trace settings",
	"trace-rate":                 "perfscen does not change the server's trace settings",
	"trace-count":                "perfscen does not change the server's trace settings",
	"log-frequency":              "perfscen does not change the server's trace settings",
	"sequence-id-range":          "perfscen numbers sequences itself, from 1, unique within a run",
}
