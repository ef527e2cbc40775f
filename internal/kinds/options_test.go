package kinds

import (
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/runner/plan"
)

func TestDecodeOptions(t *testing.T) {
	type settings struct {
		Signature string `json:"signature_name"`
		Rows      bool   `json:"rows"`
	}
	var got settings
	srv := plan.Server{Kind: "tfserving", Options: map[string]any{"signature_name": "sig", "rows": true}}
	if err := DecodeOptions(srv, &got); err != nil || got != (settings{"sig", true}) {
		t.Fatalf("DecodeOptions = %+v, %v", got, err)
	}
	srv = plan.Server{Name: "b", Kind: "tfserving", Options: map[string]any{"signatur": "x"}}
	err := DecodeOptions(srv, &got)
	if err == nil || !strings.Contains(err.Error(), "servers.b.tfserving") || !strings.Contains(err.Error(), "signatur") || exitcode.Of(err) != exitcode.Invalid {
		t.Fatalf("unknown key: err = %v (exit %d)", err, exitcode.Of(err))
	}
	if err := DecodeOptions(plan.Server{Kind: "x"}, &got); err != nil {
		t.Fatalf("no block: %v", err)
	}
}
