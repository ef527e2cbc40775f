package importer

import (
	"fmt"
	"slices"
	"strings"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// perf_analyzer's service kinds (--service-kind), as its command line
// names them.
const (
	KindTriton      = "triton"
	KindTritonCAPI  = "triton_c_api"
	KindTFServing   = "tfserving"
	KindTorchServe  = "torchserve"
	KindDynamicGRPC = "dynamic_grpc"
	KindOpenAI      = "openai"
)

// ServiceKinds lists the names ParseServiceKind takes.
var ServiceKinds = []string{KindTriton, KindTritonCAPI, KindTFServing, KindTorchServe, KindDynamicGRPC, KindOpenAI}

// ParseServiceKind reads a service kind as perf_analyzer's flag takes it
// (torchserve) or as its console prints it (TORCHSERVE,
// TENSORFLOW_SERVING; older builds printed "Triton C-API").
func ParseServiceKind(s string) (string, error) {
	k := strings.NewReplacer("_", "", "-", "", " ", "").Replace(strings.ToLower(strings.TrimSpace(s)))
	switch k {
	case "tensorflowserving":
		return KindTFServing, nil
	case "tritoncapi":
		return KindTritonCAPI, nil
	case "dynamicgrpc":
		return KindDynamicGRPC, nil
	}
	for _, known := range ServiceKinds {
		if k == known {
			return k, nil
		}
	}
	return "", fmt.Errorf("service kind %q is not one of perf_analyzer's (%s)", strings.TrimSpace(s), strings.Join(ServiceKinds, ", "))
}

// impliedProtocol is the protocol a service kind leaves no choice about:
// perf_analyzer drives TF Serving and dynamic gRPC services over gRPC
// only, and TorchServe over HTTP only.
func impliedProtocol(kind string) plan.Protocol {
	switch kind {
	case KindTFServing, KindDynamicGRPC:
		return plan.ProtocolGRPC
	case KindTorchServe:
		return plan.ProtocolHTTP
	}
	return ""
}

// applyServiceKind records what a service kind means for a point's
// figures. perf_analyzer reads server statistics from Triton only
// (inference_profiler.cc: include_server_stats is false for every other
// kind), so TF Serving, TorchServe and dynamic gRPC points have no server
// figures at all, which stays absent, never zero. Its dynamic gRPC client
// stamps the end of sending and the start of receiving together after
// the last message is written (dynamic_grpc_client.cc), so the server's
// time lands in its "(un)marshal" share and "response wait" is about
// zero: that split is left out.
func applyServiceKind(p *result.Point, kind string) {
	switch kind {
	case KindTFServing, KindTorchServe, KindDynamicGRPC:
		p.Notes = append(p.Notes, fmt.Sprintf("perf_analyzer's %s service kind measures on the client only: the point has no server-side figures", kind))
	}
	if kind == KindDynamicGRPC {
		p.Summary.ClientSendRecvUs, p.Summary.ClientWaitUs = 0, 0
		for _, k := range []string{"client_send_recv_us", "client_wait_us"} {
			if !slices.Contains(p.Summary.Absent, k) {
				p.Summary.Absent = append(p.Summary.Absent, k)
			}
		}
		slices.Sort(p.Summary.Absent)
		p.Notes = append(p.Notes, "perf_analyzer's dynamic gRPC client times a whole stream as send and receive, the server's time included, with no response wait between: its client send/receive split is not imported")
	}
}

// methodModel names a dynamic gRPC run by its method when no model is
// given: v1.Simple/Echo becomes v1.Simple.Echo (a slash would read as a
// server name in perfscen's model names).
func methodModel(method string) string {
	return strings.ReplaceAll(strings.Trim(method, "/"), "/", ".")
}
