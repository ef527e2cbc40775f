package refserver

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/perfscen/perfscen/internal/tensor"
)

// Version is the only version every built-in model has.
const modelVersion = "1"

// tensorSpec is one model input or output as its config states it: dims
// exclude the batch dimension when the model batches; -1 is variable.
type tensorSpec struct {
	name  string
	dtype tensor.DataType
	dims  []int64
}

// modelDef describes a built-in model: its Triton-style config and how to
// build the engine that computes it.
type modelDef struct {
	name         string
	platform     string
	maxBatchSize int
	inputs       []tensorSpec
	outputs      []tensorSpec
	sequence     bool     // sequence batching: requests need a sequence_id
	seqOldest    bool     // sequence batching with the oldest strategy (config only)
	seqControls  []string // sequence control inputs the config lists (config only)
	seqStringID  bool     // the CORRID control is TYPE_STRING (config only)
	// decoupled models answer 0..n responses per request, on gRPC streams
	// only (Triton's model_transaction_policy { decoupled: true }).
	decoupled bool
	// defaults adjusts the generic parameter defaults for this model.
	defaults  func(*modelParams)
	newEngine func() engine
	// own lists the model-specific parameters this model reads (delay and
	// jitter for delay, slowdown for the mlp models); setting another
	// model's parameter would silently do nothing, so it is refused.
	own []string
}

// modelSpecificParams are read by some models only; every other
// parameter applies to any model.
var modelSpecificParams = []string{ParamDelay, ParamJitter, ParamSlowdown}

// checkOwnParams refuses a model-specific parameter the model ignores.
func (d *modelDef) checkOwnParams(kv map[string]string) error {
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if slices.Contains(modelSpecificParams, k) && !slices.Contains(d.own, k) {
			return fmt.Errorf("parameter %q: model %s does not use it (it applies to %s)", k, d.name, paramOwners(k))
		}
	}
	return nil
}

// paramOwners names the built-in models that read a model-specific key.
func paramOwners(key string) string {
	var names []string
	for name, d := range builtinModels() {
		if slices.Contains(d.own, key) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// engine computes a model. One engine value serves all instances, so
// execute must be safe for concurrent use.
type engine interface {
	execute(ctx context.Context, b *execBatch) ([]tensorBuf, error)
}

// tensorBuf is a tensor in raw form (packed little-endian; BYTES elements
// length-prefixed); shape includes the batch dimension when batching.
type tensorBuf struct {
	shape []int64
	raw   []byte
}

// execBatch is what one model execution sees: inputs of every job merged
// along the batch dimension, in config order.
type execBatch struct {
	inputs    []tensorBuf
	jobs      []*job
	batchSize int
	params    *modelParams
	jitter    time.Duration // drawn per execution from the model RNG (delay model)
	after     afterFunc     // waits out service times
}
