package tfserving

import (
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/protobuf/types/known/wrapperspb"

	pb "github.com/perfscen/perfscen/internal/kinds/tfserving/tfservingpb"
)

// modelRef names a model as a TF Serving request does: a version number,
// a version label ("stable") or neither (the latest), and a signature.
type modelRef struct {
	Name      string
	Version   string // plan.Model.Version: a number, a label, or ""
	Signature string
}

// spec is the request's ModelSpec.
func (m modelRef) spec() *pb.ModelSpec {
	s := &pb.ModelSpec{Name: m.Name, SignatureName: m.Signature}
	if m.Version == "" {
		return s
	}
	if v, err := strconv.ParseInt(m.Version, 10, 64); err == nil {
		s.VersionChoice = &pb.ModelSpec_Version{Version: wrapperspb.Int64(v)}
	} else {
		s.VersionChoice = &pb.ModelSpec_VersionLabel{VersionLabel: m.Version}
	}
	return s
}

// path is the REST resource of the model: /v1/models/NAME, then
// /versions/N or /labels/L.
func (m modelRef) path() string {
	p := "/v1/models/" + m.Name
	if m.Version == "" {
		return p
	}
	if _, err := strconv.ParseInt(m.Version, 10, 64); err == nil {
		return p + "/versions/" + m.Version
	}
	return p + "/labels/" + m.Version
}

// what names the model in messages.
// isLabel says whether the version is a label ("stable"), not a number.
func (m modelRef) isLabel() bool {
	if m.Version == "" {
		return false
	}
	_, err := strconv.ParseInt(m.Version, 10, 64)
	return err != nil
}

func (m modelRef) what() string {
	if m.Version == "" {
		return fmt.Sprintf("model %q", m.Name)
	}
	return fmt.Sprintf("model %q version %s", m.Name, m.Version)
}

// statusVerdict is what a model's status says about measuring it.
type statusVerdict int

const (
	statusAvailable statusVerdict = iota // a version serves
	statusLoading                        // a version is on its way: wait
	statusDown                           // no version serves nor will
)

// judgeStatus reads GetModelStatus's answer: the model serves when a
// version listed is AVAILABLE; START and LOADING are worth waiting for;
// anything else (UNLOADING, END, an error status) is not.
func judgeStatus(resp *pb.GetModelStatusResponse) (statusVerdict, string) {
	var states []string
	verdict := statusDown
	for _, v := range resp.GetModelVersionStatus() {
		st := v.GetState()
		s := fmt.Sprintf("version %d %s", v.GetVersion(), st)
		if e := v.GetStatus(); e.GetErrorCode() != pb.Code_OK || e.GetErrorMessage() != "" {
			s += fmt.Sprintf(" (%s: %s)", e.GetErrorCode(), e.GetErrorMessage())
		}
		states = append(states, s)
		switch st {
		case pb.ModelVersionStatus_AVAILABLE:
			verdict = statusAvailable
		case pb.ModelVersionStatus_START, pb.ModelVersionStatus_LOADING:
			if verdict != statusAvailable {
				verdict = statusLoading
			}
		}
	}
	if len(states) == 0 {
		return statusDown, "no versions listed"
	}
	return verdict, strings.Join(states, "; ")
}
