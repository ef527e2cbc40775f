package pacompat

import (
	"fmt"
	"strings"
)

// verify is perf_analyzer's VerifyOptions: the rules across options, in
// its order and with its messages, including the defaults it settles
// there (deprecated -t/-c/-d into the concurrency range, the metrics URL).
func (p *Params) verify() error {
	if p.ModelName == "" && p.ServiceKind != "dynamic_grpc" {
		// A dynamic gRPC service has methods, not models: --grpc-method
		// names what is called.
		return usage("Failed to parse -m (model name). The value must be specified.")
	}
	if p.Concurrency.Start <= 0 || p.ConcurrentRequestCount < 0 {
		return usage("The start of the search range must be > 0")
	}
	if p.RequestRate.Start <= 0 {
		return usage("Failed to parse --request-rate-range. The start of the search range must be > 0.")
	}
	if p.Protocol == "unknown" {
		return usage("Failed to parse -i (protocol). The value should be either HTTP or gRPC.")
	}
	if p.Streaming && p.Protocol != "grpc" {
		return usage("Streaming is only allowed with gRPC protocol.")
	}
	if p.Compression != "" && p.Protocol != "grpc" {
		return usage("Using compression algorithm is only allowed with gRPC protocol.")
	}
	if p.SequenceLengthVariation < 0 {
		return usage("Failed to parse --sequence-length-variation. The value must be >= 0.0.")
	}
	if p.Percentile != -1 && (p.Percentile > 99 || p.Percentile < 1) {
		return usage("Failed to parse --percentile. The value must be -1 for not reporting or in range (0, 100).")
	}
	if p.ZeroInput && len(p.InputData) > 0 {
		return usage("The -z flag cannot be set when --data-directory is provided.")
	}
	if p.Async && p.ForcedSync {
		return usage("Cannot specify --async and --sync simultaneously.")
	}
	if p.UsingConcurrencyRange && p.UsingOldOptions {
		return usage("Cannot use deprecated options with --concurrency-range.")
	} else if p.UsingOldOptions {
		if p.Dynamic {
			p.Concurrency.End = uint64(max(p.MaxConcurrency, 0))
		}
		p.Concurrency.Start = uint64(max(p.ConcurrentRequestCount, 0))
	}
	if p.UsingRequestRateRange && p.UsingOldOptions {
		return usage("Cannot use concurrency options with --request-rate-range.")
	}
	modes := 0
	for _, on := range []bool{p.PeriodicRange != "", p.UsingConcurrencyRange, p.UsingRequestRateRange, p.RequestIntervals != ""} {
		if on {
			modes++
		}
	}
	if modes > 1 {
		return usage("Cannot specify more then one inference load mode. Please choose only one of the following modes: --concurrency-range, --periodic-concurrency-range, --request-rate-range, or --request-intervals.")
	}
	if p.RequestIntervals != "" && p.UsingOldOptions {
		return usage("Cannot use deprecated options with --request-intervals.")
	}
	if p.RequestIntervals != "" && (p.UsingRequestRateRange || p.UsingConcurrencyRange) {
		return usage("Cannot use --concurrency-range or --request-rate-range along with --request-intervals.")
	}
	concEndZero := p.Concurrency.End == noLimit
	rateEndZero := p.RequestRate.End == noLimit
	if (concEndZero || rateEndZero) && p.LatencyThresholdMs == 0 {
		return usage("The end of the search range and the latency limit can not be both 0 (or 0.0) simultaneously")
	}
	if (concEndZero || rateEndZero) && p.BinarySearch {
		return usage("The end of the range can not be 0 (or 0.0) for binary search mode.")
	}
	if p.BinarySearch && p.LatencyThresholdMs == 0 {
		return usage("The --latency-threshold cannot be 0 for binary search mode.")
	}
	if p.BinarySearch && (p.Concurrency.End < p.Concurrency.Start || p.RequestRate.End < p.RequestRate.Start) {
		return usage("The end of the range can not be less than start of the range for binary search mode.")
	}
	if p.RequestCount != 0 {
		if p.UsingConcurrencyRange {
			if uint64(p.RequestCount) < p.Concurrency.Start {
				return usage("request-count can not be less than concurrency")
			}
			if p.Concurrency.Start < p.Concurrency.End {
				return usage("request-count not supported with multiple concurrency values in one run")
			}
		}
		if p.UsingRequestRateRange {
			if p.RequestCount < int(p.RequestRate.Start) {
				return usage("request-count can not be less than request-rate")
			}
			if p.RequestRate.Start < p.RequestRate.End {
				return usage("request-count not supported with multiple request-rate values in one run")
			}
		}
	}
	switch p.ServiceKind {
	case "tfserving":
		switch {
		case p.Protocol != "grpc":
			return usage("perf_analyzer supports only grpc protocol for TensorFlow Serving.")
		case p.Streaming:
			return usage("perf_analyzer does not support streaming for TensorFlow Serving.")
		case p.Async:
			return usage("perf_analyzer does not support async API for TensorFlow Serving.")
		}
	case "torchserve":
		if len(p.InputData) == 0 {
			return usage("--input-data should be provided with a json file with input data for torchserve.")
		}
	case "triton_c_api":
		if p.TritonServerDir == "" {
			return usage("--triton-server-path should not be empty when using service-kind=triton_c_api.")
		}
		if p.ModelRepository == "" {
			return usage("--model-repository should not be empty when using service-kind=triton_c_api.")
		}
		if p.Async {
			return usage("Async mode is not supported by triton_c_api service kind.")
		}
	case "openai":
		if len(p.InputData) == 0 {
			return usage("Must supply --input-data for OpenAI service kind.")
		}
	case "dynamic_grpc":
		if p.GRPCMethod == "" {
			return usage("Must supply --grpc-method for dynamic_grpc service kind.")
		}
	}
	if p.Metrics && p.ServiceKind != "triton" {
		return usage("Server-side metric collection is only supported with Triton client backend.")
	}
	if p.MetricsGiven && !p.Metrics {
		return usage("Must specify --collect-metrics when using the --metrics-url option.")
	}
	if p.MetricsMsSet && !p.Metrics {
		return usage("Must specify --collect-metrics when using the --metrics-interval option.")
	}
	if p.Metrics && !p.MetricsGiven {
		// The metrics URL follows the server's host, on Triton's port.
		if i := strings.Index(p.URL, ":"); i >= 0 {
			p.MetricsURL = p.URL[:i] + ":8002/metrics"
		}
	}
	return nil
}

// supported refuses what perf_analyzer accepts and perfscen cannot do as
// asked, once the command line is otherwise valid (so a bad command line
// gets perf_analyzer's own message first).
func (p *Params) supported() error {
	refuse := func(opt, format string, args ...any) error {
		return &UnsupportedError{Option: opt, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case p.Endpoint != "" && p.ServiceKind != "openai":
		return refuse("--endpoint", "it applies to --service-kind=openai (perf_analyzer ignores it for %s)", p.ServiceKind)
	case p.GRPCMethod != "" && p.ServiceKind != "dynamic_grpc":
		return refuse("--grpc-method", "it applies to --service-kind=dynamic_grpc (perf_analyzer ignores it for %s)", p.ServiceKind)
	case p.ServiceKind == "openai" && p.Protocol != "http":
		return refuse("-i "+p.Protocol, "perf_analyzer's openai service kind speaks HTTP only")
	case p.ServiceKind == "dynamic_grpc" && p.Protocol != "grpc":
		return refuse("-i "+p.Protocol, "a dynamic gRPC service is reached over gRPC only")
	case p.ServiceKind == "dynamic_grpc" && p.Streaming:
		return refuse("--streaming", "perfscen calls a method as it is declared: a streaming method streams by itself")
	}
	if len(p.Intervals) > 0 && p.RequestCount != 0 {
		return refuse("--request-count with --request-intervals", "perfscen counts requests at a concurrency only")
	}
	if p.ServiceKind != "triton" {
		// perf_analyzer reads these for Triton only; the other kinds have
		// no such settings in perfscen either.
		switch {
		case p.SharedMemory != "none":
			return refuse("--shared-memory", "shared memory is Triton's (service kind triton); %s has none", p.ServiceKind)
		case len(p.Headers) > 0 && p.ServiceKind == "triton_c_api":
			return refuse("-H", "the C API has no HTTP headers")
		}
	}
	if (p.Compression == "gzip" || p.Compression == "deflate") && p.ServiceKind != "triton" {
		return refuse("--grpc-compression-algorithm", "perfscen compresses the gRPC requests of service kind triton only")
	}
	if p.MaxTrials < 3 {
		return refuse("-r/--max-trials", "a level is stable when 3 windows in a row agree, so fewer than 3 windows never are (perf_analyzer would fail every level); give 3 or more")
	}
	if p.StabilityPct == 0 {
		return refuse("-s/--stability-percentage", "0%% asks for windows that agree exactly, which no measurement does; give a percentage above 0")
	}
	if p.InputTensorFormat != p.OutputTensorFormat {
		return refuse("--input-tensor-format/--output-tensor-format", "perfscen has one tensor format for requests and responses (server.tensor_format); give both the same value")
	}
	ssl := p.SSL
	if ssl.HTTPSClientCertType == "DER" || ssl.HTTPSPrivateKeyType == "DER" {
		return refuse("--ssl-https-*-type DER", "perfscen reads PEM certificates and keys only")
	}
	if ssl.HTTPSVerifyHostGiven && ssl.HTTPSVerifyHost == 1 {
		return refuse("--ssl-https-verify-host=1", "libcurl treats 1 as 2 (verify); write 2, or 0 to skip verification")
	}
	if ssl.HTTPSVerifyPeer != ssl.boolVerifyHost() && ssl.HTTPSVerifyPeerGiven && ssl.HTTPSVerifyHostGiven {
		return refuse("--ssl-https-verify-peer/--ssl-https-verify-host", "perfscen verifies the certificate and its name together or not at all (server.tls.insecure_skip_verify)")
	}
	if ssl.GRPCPrivateKey != "" && ssl.GRPCCertChain == "" || ssl.GRPCPrivateKey == "" && ssl.GRPCCertChain != "" {
		return refuse("--ssl-grpc-private-key-file", "a client certificate needs both --ssl-grpc-certificate-chain-file and --ssl-grpc-private-key-file")
	}
	if ssl.HTTPSPrivateKey != "" && ssl.HTTPSClientCert == "" || ssl.HTTPSPrivateKey == "" && ssl.HTTPSClientCert != "" {
		return refuse("--ssl-https-private-key-file", "a client certificate needs both --ssl-https-client-certificate-file and --ssl-https-private-key-file")
	}
	if p.tlsHTTP() && p.tlsGRPC() {
		return refuse("--ssl-grpc-* with --ssl-https-*", "perfscen has one TLS setting for both protocols; give the options of the protocol in use (-i)")
	}
	if p.RequestCount != 0 && !p.TargetsConcurrency() {
		// perf_analyzer sends the N requests at the rate (Profile<double>
		// with request_count); perfscen's count mode runs at a concurrency.
		return refuse("--request-count with --request-rate-range", "perf_analyzer sends the N requests at the request rate; perfscen counts requests at a concurrency only (measure the rate in windows with -p, or count at a concurrency with --concurrency-range)")
	}
	if p.RequestCount != 0 && p.TargetsConcurrency() && p.Concurrency.Start < p.Concurrency.End {
		return refuse("--request-count", "with a concurrency range perf_analyzer counts one window per level; perfscen pa measures --request-count at one level only")
	}
	return nil
}

// boolVerifyHost folds libcurl's verify-host levels into verify or not.
func (s SSL) boolVerifyHost() int {
	if s.HTTPSVerifyHost == 0 {
		return 0
	}
	return 1
}

func (p *Params) tlsHTTP() bool {
	s := p.SSL
	return s.HTTPSCACerts != "" || s.HTTPSClientCert != "" || s.HTTPSPrivateKey != "" || s.HTTPSVerifyPeerGiven || s.HTTPSVerifyHostGiven
}

func (p *Params) tlsGRPC() bool {
	s := p.SSL
	return s.GRPCUseSSL || s.GRPCRootCerts != "" || s.GRPCPrivateKey != "" || s.GRPCCertChain != ""
}
