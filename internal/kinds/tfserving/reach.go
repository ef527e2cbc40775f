package tfserving

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/kinds"
	pb "github.com/perfscen/perfscen/internal/kinds/tfserving/tfservingpb"
	"github.com/perfscen/perfscen/internal/transport"
	"github.com/perfscen/perfscen/runner/plan"
)

// reach waits until the server answers the model's status over proto and
// judges the answer before any load: the model serves (a version is
// AVAILABLE), is still loading (wait, up to the connect timeout), or
// cannot serve. A port that answers as another API (Triton's, a REST port
// asked for gRPC, …) is the scenario's mistake and says so.
func (s *server) reach(ctx context.Context, proto plan.Protocol, m modelRef, timeout time.Duration) error {
	a := s.apis[proto]
	url := s.urls[proto]
	var (
		last    *pb.GetModelStatusResponse
		lastErr error
		states  string
	)
	probe := func(ctx context.Context) (bool, error) {
		resp, err := a.status(ctx, m)
		last, lastErr = resp, err
		if err != nil {
			if answered(proto, err) {
				return true, nil
			}
			return false, err
		}
		v, d := judgeStatus(resp)
		states = d
		if v == statusLoading {
			return false, fmt.Errorf("%s is not available yet: %s", m.what(), d)
		}
		return true, nil
	}
	where := fmt.Sprintf("TF Serving at %s (%s)", url, proto)
	if err := kinds.WaitReady(ctx, probe, where, timeout); err != nil {
		return err
	}
	if lastErr == nil {
		if v, _ := judgeStatus(last); v != statusAvailable {
			return failure.Env(fmt.Errorf("%s at %s cannot serve: %s", m.what(), url, states))
		}
		return nil
	}
	if hint := protocolMismatch(proto, lastErr); hint != "" {
		return failure.Invalid(fmt.Errorf("%s: the server at %s %s: %w", kinds.ServerField(s.plan.Server()), url, hint, lastErr))
	}
	otherAPI := func() error {
		if other := a.identify(ctx); other != "" {
			return failure.Invalid(fmt.Errorf("%s: the server at %s (%s) is %s, not TensorFlow Serving: use its kind (e.g. kind: kserve), or TF Serving's %s port (%s by default); asked for %s's status it answered: %w",
				kinds.ServerField(s.plan.Server()), url, proto, other, portName(proto), defaultPort(proto), m.what(), lastErr))
		}
		return nil
	}
	switch {
	case errors.Is(lastErr, errNotTFServing):
		if err := otherAPI(); err != nil {
			return err
		}
		return failure.Invalid(fmt.Errorf("%s: the server at %s (%s) does not answer as TensorFlow Serving: %w", kinds.ServerField(s.plan.Server()), url, proto, lastErr))
	case unimplemented(lastErr):
		if err := otherAPI(); err != nil {
			return err
		}
		return s.withoutModelService(ctx, a, m, url, lastErr)
	case notFound(lastErr) && !tfNotFound(proto, lastErr):
		// A 404 not worded as TF Serving words it: another server's port.
		if err := otherAPI(); err != nil {
			return err
		}
		return failure.Invalid(fmt.Errorf("%s: the server at %s (%s) does not answer as TensorFlow Serving (asked for %s's status it answered 404 without TF Serving's JSON error): %w; is it TF Serving's %s port (%s by default)?",
			kinds.ServerField(s.plan.Server()), url, proto, m.what(), lastErr, portName(proto), defaultPort(proto)))
	case notFound(lastErr):
		if err := otherAPI(); err != nil {
			return err
		}
		// TF Serving has no API that lists its models.
		return failure.Invalid(fmt.Errorf("%s is not served by the TF Serving at %s (%s): %w", m.what(), url, proto, lastErr))
	}
	if m.isLabel() && invalidArgument(lastErr) {
		// A label the server does not know: the scenario's mistake.
		return failure.Invalid(fmt.Errorf("%s at %s: the server has no version labelled %q (labels come from its model config's version_labels): %w", m.what(), url, m.Version, lastErr))
	}
	return failure.Env(fmt.Errorf("%s at %s: status: %w", m.what(), url, lastErr))
}

// withoutModelService judges a gRPC server that answered the status call
// UNIMPLEMENTED: a server with PredictionService alone (a proxy, a custom
// front) is measurable, and only the status check is lost. Its metadata
// call (GetModelMetadata, of PredictionService) then says what the status
// would have: every answer of it is judged here, quoting it, not the
// status call's UNIMPLEMENTED.
func (s *server) withoutModelService(ctx context.Context, a api, m modelRef, url string, statusErr error) error {
	_, err := a.signatures(ctx, m)
	switch {
	case err == nil:
		s.addNote(fmt.Sprintf("the gRPC server at %s has no tensorflow.serving.ModelService: model status was not checked", url))
		return nil
	case notFound(err):
		// Its PredictionService answered: the model is what it lacks.
		return failure.Invalid(fmt.Errorf("%s is not served by the gRPC server at %s (it has no tensorflow.serving.ModelService; its PredictionService says: %w)", m.what(), url, err))
	case m.isLabel() && invalidArgument(err):
		return failure.Invalid(fmt.Errorf("%s at %s: the server has no version labelled %q (labels come from its model config's version_labels; it has no tensorflow.serving.ModelService, its PredictionService says: %w)", m.what(), url, m.Version, err))
	case unimplemented(err):
		// Neither status nor metadata: a proxy that forwards Predict
		// alone still answers Predict with something other than
		// UNIMPLEMENTED (an empty request is refused as invalid).
		if servesPredict(ctx, a, m) {
			return failure.Invalid(fmt.Errorf("%s: the gRPC server at %s serves PredictionService/Predict but neither tensorflow.serving.ModelService nor PredictionService/GetModelMetadata, which %s's signature is read from before any load: point the scenario at TF Serving itself, or at a proxy that forwards GetModelMetadata too: %w",
				kinds.ServerField(s.plan.Server()), url, m.what(), err))
		}
		return failure.Invalid(fmt.Errorf("%s: the gRPC server at %s implements neither tensorflow.serving.ModelService nor PredictionService, so it is not TensorFlow Serving: %w", kinds.ServerField(s.plan.Server()), url, statusErr))
	}
	return failure.Env(fmt.Errorf("%s at %s: metadata (the server has no tensorflow.serving.ModelService, so its status was not checked): %w", m.what(), url, err))
}

// servesPredict says whether a gRPC server answers Predict at all: an
// empty request of the model, which it serves or refuses, but never with
// UNIMPLEMENTED when it has the method.
func servesPredict(ctx context.Context, a api, m modelRef) bool {
	g, ok := a.(*grpcAPI)
	if !ok {
		return false
	}
	_, _, err := g.predict(ctx, &pb.PredictRequest{ModelSpec: m.spec()})
	var se *transport.ServerError
	return err == nil || errors.As(err, &se) && se.GRPCCode != codes.Unimplemented
}

func (s *server) addNote(n string) {
	for _, x := range s.notes {
		if x == n {
			return
		}
	}
	s.notes = append(s.notes, n)
}

// answered reports whether err is an answer worth judging (a server
// speaking, in whatever tongue) rather than a server not there yet.
func answered(proto plan.Protocol, err error) bool {
	var se *transport.ServerError
	var pe *transport.ProtocolError
	return errors.As(err, &se) || errors.As(err, &pe) || protocolMismatch(proto, err) != ""
}

// protocolMismatch recognises a port that speaks the other protocol: a
// gRPC client reading an HTTP/1.1 answer where the HTTP/2 server preface
// belongs, or an HTTP/1.1 client reading HTTP/2 frames (a gRPC port
// greets every connection with a SETTINGS frame).
func protocolMismatch(proto plan.Protocol, err error) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	switch proto {
	case plan.ProtocolGRPC:
		if strings.Contains(msg, "error reading server preface") || strings.Contains(msg, "frame too large") ||
			strings.Contains(msg, "HTTP/1.") {
			return "answers HTTP/1.x, not gRPC (is it the REST port? use protocol: http, or TF Serving's gRPC port, 8500 by default)"
		}
	case plan.ProtocolHTTP:
		if strings.Contains(msg, "malformed HTTP") && strings.Contains(msg, `\x00`) {
			return "answers HTTP/2 frames, not HTTP/1.1 (is it the gRPC port? use protocol: grpc, or TF Serving's REST port, 8501 by default)"
		}
	}
	return ""
}

func portName(proto plan.Protocol) string {
	if proto == plan.ProtocolGRPC {
		return "gRPC"
	}
	return "REST"
}

func defaultPort(proto plan.Protocol) string {
	if proto == plan.ProtocolGRPC {
		return defaultGRPCPort
	}
	return defaultRESTPort
}
