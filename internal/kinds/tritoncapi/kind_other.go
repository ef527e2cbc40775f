//go:build !linux

package tritoncapi

import (
	"context"
	"errors"

	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/runner/plan"
)

// Kind is Triton's in-process C API; it needs Linux, as perfscen does.
type Kind struct{}

// Name is the scenario's server.kind.
func (Kind) Name() string { return Name }

// Open refuses: the C API kind runs on Linux only.
func (Kind) Open(context.Context, *plan.Plan, kinds.Env) (kinds.Server, error) {
	return nil, errors.New("server kind triton_c_api needs Linux")
}
