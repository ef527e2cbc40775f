package tfserving

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/wrapperspb"

	pb "github.com/perfscen/perfscen/internal/kinds/tfserving/tfservingpb"
)

// restPath is TF Serving's REST resource grammar (http_rest_api_util.cc
// ParseModelInfo): a model, an optional version or label, then /metadata
// or a :verb.
var restPath = regexp.MustCompile(`(?i)^/v1/models/([^/:]+)(?:/versions/(\d+)|/labels/([^/:]+))?(?:(/metadata)|:(classify|regress|predict))?$`)

// maxBody bounds a request body.
const maxBody = 1 << 30

func (f *frontend) restHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == promPath && r.Method == http.MethodGet:
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			f.met.write(w)
		case len(r.URL.Path) >= 4 && strings.EqualFold(r.URL.Path[:4], "/v1/"):
			f.v1(w, r)
		default:
			http.NotFound(w, r)
		}
	})
}

// v1 serves TF Serving's /v1/ API, recording each request as TF Serving's
// HTTP server does: a request count for every one, the latency of the
// successful ones.
func (f *frontend) v1(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	m := restPath.FindStringSubmatch(r.URL.Path)
	if m == nil {
		writeRESTError(w, &apiErr{code: pb.Code_INVALID_ARGUMENT, msg: fmt.Sprintf("Malformed request: %s %s", r.Method, r.URL.Path)})
		return
	}
	name, verb := m[1], strings.ToLower(m[5])
	var version *int64
	if m[2] != "" {
		v, err := strconv.ParseInt(m[2], 10, 64)
		if err != nil {
			writeRESTError(w, &apiErr{code: pb.Code_INVALID_ARGUMENT, msg: "Failed to convert version: " + m[2]})
			return
		}
		version = &v
	}
	var body []byte
	var e *apiErr
	switch {
	case r.Method == http.MethodGet && verb == "" && m[4] != "":
		body, e = f.restMetadata(name, version, m[3])
	case r.Method == http.MethodGet && verb == "":
		body, e = f.restStatus(name, version, m[3])
	case r.Method == http.MethodPost && verb == "predict":
		body, e = f.restPredict(r, name, version, m[3])
	case r.Method == http.MethodPost && verb != "":
		e = &apiErr{code: pb.Code_UNIMPLEMENTED, msg: "the embedded TF Serving serves predict only, not " + verb}
	default:
		e = &apiErr{code: pb.Code_INVALID_ARGUMENT, msg: fmt.Sprintf("Malformed request: %s %s", r.Method, r.URL.Path)}
	}
	f.met.record(name, verb, "REST", e, time.Since(start))
	if e != nil {
		if e.drop {
			dropConnection(w)
			return
		}
		writeRESTError(w, e)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}

func (f *frontend) restStatus(name string, version *int64, label string) ([]byte, *apiErr) {
	spec := &pb.ModelSpec{Name: name}
	setVersion(spec, version, label)
	resp, e := f.status(spec)
	if e != nil {
		return nil, e
	}
	b, err := statusJSON(resp)
	if err != nil {
		return nil, &apiErr{code: pb.Code_INTERNAL, msg: err.Error()}
	}
	return b, nil
}

func (f *frontend) restMetadata(name string, version *int64, label string) ([]byte, *apiErr) {
	spec := &pb.ModelSpec{Name: name}
	setVersion(spec, version, label)
	resp, e := f.metadata(&pb.GetModelMetadataRequest{ModelSpec: spec, MetadataField: []string{signatureKey}})
	if e != nil {
		return nil, e
	}
	sigs, err := signaturesFromGRPC(resp)
	if err != nil {
		return nil, &apiErr{code: pb.Code_INTERNAL, msg: err.Error()}
	}
	b, err := restMetadataJSON(resp.GetModelSpec(), sigs)
	if err != nil {
		return nil, &apiErr{code: pb.Code_INTERNAL, msg: err.Error()}
	}
	return b, nil
}

func (f *frontend) restPredict(r *http.Request, name string, version *int64, label string) ([]byte, *apiErr) {
	sv, e := f.servableOf(name, version, label)
	if e != nil {
		return nil, e
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		return nil, &apiErr{code: pb.Code_INVALID_ARGUMENT, msg: "reading the body: " + err.Error()}
	}
	var sigErr *apiErr
	req, err := decodePredictBody(raw, func(signature string) ([]tensorSpec, error) {
		def, ok := sv.sigs.GetSignatureDef()[signature]
		if !ok {
			sigErr = &apiErr{code: pb.Code_FAILED_PRECONDITION, msg: fmt.Sprintf("Serving signature name: %q not found in signature def", signature)}
			return nil, sigErr
		}
		sig, err := pickSignature(name, &pb.SignatureDefMap{SignatureDef: map[string]*pb.SignatureDef{signature: def}}, signature)
		if err != nil {
			return nil, err
		}
		specs := make([]tensorSpec, len(sig.Inputs))
		for i, t := range sig.Inputs {
			specs[i] = tensorSpec{Name: t.Alias, DataType: t.DataType}
		}
		return specs, nil
	})
	if sigErr != nil {
		return nil, sigErr
	}
	if err != nil {
		return nil, &apiErr{code: pb.Code_INVALID_ARGUMENT, msg: err.Error()}
	}
	outs, e := f.predict(r.Context(), sv, req.Signature, req.Inputs, nil)
	if e != nil {
		return nil, e
	}
	b, err := encodePredictReply(req.Format, outs)
	if err != nil {
		return nil, &apiErr{code: pb.Code_INTERNAL, msg: err.Error()}
	}
	return b, nil
}

func setVersion(spec *pb.ModelSpec, version *int64, label string) {
	switch {
	case version != nil:
		spec.VersionChoice = &pb.ModelSpec_Version{Version: wrapperspb.Int64(*version)}
	case label != "":
		spec.VersionChoice = &pb.ModelSpec_VersionLabel{VersionLabel: label}
	}
}

// httpStatus is TF Serving's mapping of its codes (http_server.cc
// ToHTTPStatusCode).
func httpStatus(c pb.Code) int {
	switch c {
	case pb.Code_OK:
		return http.StatusOK
	case pb.Code_CANCELLED:
		return 499
	case pb.Code_INVALID_ARGUMENT, pb.Code_FAILED_PRECONDITION, pb.Code_OUT_OF_RANGE:
		return http.StatusBadRequest
	case pb.Code_DEADLINE_EXCEEDED:
		return http.StatusGatewayTimeout
	case pb.Code_NOT_FOUND:
		return http.StatusNotFound
	case pb.Code_ALREADY_EXISTS, pb.Code_ABORTED:
		return http.StatusConflict
	case pb.Code_PERMISSION_DENIED:
		return http.StatusForbidden
	case pb.Code_RESOURCE_EXHAUSTED:
		return http.StatusTooManyRequests
	case pb.Code_UNIMPLEMENTED:
		return http.StatusNotImplemented
	case pb.Code_UNAVAILABLE:
		return http.StatusServiceUnavailable
	case pb.Code_UNAUTHENTICATED:
		return http.StatusUnauthorized
	}
	return http.StatusInternalServerError
}

// writeRESTError answers {"error": "..."} as TF Serving does.
func writeRESTError(w http.ResponseWriter, e *apiErr) {
	b, _ := json.Marshal(map[string]string{"error": e.msg})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(httpStatus(e.code))
	w.Write(b)
}

// dropConnection closes the client's connection without an answer, as
// fault injection's drop_rate asks.
func dropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}
