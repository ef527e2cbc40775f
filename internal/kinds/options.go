package kinds

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/runner/plan"
)

// DecodeOptions decodes srv's kind block (server.<kind>: …) into into, a
// pointer to the kind's settings struct with json tags; keys it does not
// know are an error. The schema has checked the block when the scenario
// was loaded, so an error here is a plan built by hand: still the input's
// fault (exit 2), named by its field.
func DecodeOptions(srv plan.Server, into any) error {
	if len(srv.Options) == 0 {
		return nil
	}
	b, err := json.Marshal(srv.Options)
	if err != nil {
		return failure.Invalid(fmt.Errorf("%s: %w", OptionsField(srv), err))
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return failure.Invalid(fmt.Errorf("%s: %w", OptionsField(srv), err))
	}
	return nil
}

// OptionsField names srv's kind block in messages: server.<kind> or
// servers.<name>.<kind>.
func OptionsField(srv plan.Server) string {
	kind := srv.Kind
	if kind == "" {
		kind = plan.KindKServe
	}
	if srv.Name != "" {
		return "servers." + srv.Name + "." + kind
	}
	return "server." + kind
}

// ServerField names srv in messages: server, or servers.<name>.
func ServerField(srv plan.Server) string {
	if srv.Name != "" {
		return "servers." + srv.Name
	}
	return "server"
}

// OptionField names key of srv's kind block (a path in it: "library",
// "proto_files[0]") in an error: "file:line:col: server.grpc.proto_files[0]"
// where the scenario writes it, else the field alone (a plan built by
// hand, a key left to its default).
func OptionField(srv plan.Server, key string) string {
	kind := srv.Kind
	if kind == "" {
		kind = plan.KindKServe
	}
	return ServerKeyField(srv, kind+"."+key)
}

// ServerKeyField is OptionField for a key of the server block itself
// ("tls", "tls.ca_file").
func ServerKeyField(srv plan.Server, key string) string {
	if w := srv.Where[key]; w != "" {
		return w
	}
	return ServerField(srv) + "." + key
}
