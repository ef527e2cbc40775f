package refserver

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/perfscen/perfscen/internal/refserver/paramkv"
)

// Parameter keys a model accepts (Options.ModelParams, SetModelParameter).
// Keys marked load-time change the scheduler and apply when the model is
// (re)loaded; the others apply to the next request.
const (
	ParamDelay          = "delay"                 // delay model: service time (duration, default 10ms)
	ParamJitter         = "jitter"                // delay model: uniform ± jitter on delay (duration)
	ParamSlowdown       = "slowdown"              // mlp models: compute repeated this many times (float ≥ 1)
	ParamAddedLatency   = "added_latency"         // any model: extra time per execution (duration)
	ParamErrorRate      = "error_rate"            // any model: fraction answered with INTERNAL (0..1)
	ParamDropRate       = "drop_rate"             // any model: fraction dropped without answer (0..1)
	ParamStallEvery     = paramkv.StallEvery      // any model: period of stalls (duration, 0 = off)
	ParamStallFor       = paramkv.StallFor        // any model: stall length inside each period (duration)
	ParamDrift          = "drift"                 // any model: service time added per second after drift_after (duration)
	ParamDriftAfter     = "drift_after"           // any model: time after load when drift starts (duration)
	ParamHang           = "hang"                  // any model: requests never answer until cancelled (bool)
	ParamSeed           = "seed"                  // any model: fault-injection RNG seed (uint64)
	ParamDevice         = "device"                // any model: executions of models naming one device run one at a time (string)
	ParamInstanceCount  = "instance_count"        // load-time: parallel model instances (int ≥ 1)
	ParamDynamicBatch   = "dynamic_batching"      // load-time: merge queued requests (bool)
	ParamMaxQueueDelay  = "max_queue_delay"       // load-time: dynamic batcher wait (duration)
	ParamPreferredBatch = "preferred_batch_sizes" // load-time: comma list of sizes
)

var loadTimeParams = []string{ParamInstanceCount, ParamDynamicBatch, ParamMaxQueueDelay, ParamPreferredBatch}

// modelParams is the parsed, validated form of a model's parameter map.
type modelParams struct {
	delay, jitter        time.Duration
	slowdown             float64
	addedLatency         time.Duration
	errorRate, dropRate  float64
	stallEvery, stallFor time.Duration
	drift, driftAfter    time.Duration
	hang                 bool
	seed                 uint64
	device               string

	instanceCount   int
	dynamicBatching bool
	maxQueueDelay   time.Duration
	preferred       []int
}

func defaultParams() modelParams {
	return modelParams{delay: 10 * time.Millisecond, slowdown: 1, instanceCount: 1, seed: 1}
}

// applyParams parses kv over p; keys are applied in sorted order so an error
// names the same key every time.
func applyParams(p modelParams, kv map[string]string) (modelParams, error) {
	if err := paramkv.Apply(kv, p.set); err != nil {
		return p, err
	}
	return p, paramkv.CheckStall(p.stallEvery, p.stallFor)
}

func (p *modelParams) set(key, v string) error {
	var err error
	switch key {
	case ParamDelay:
		p.delay, err = parseNonNegDuration(v)
	case ParamJitter:
		p.jitter, err = parseNonNegDuration(v)
	case ParamAddedLatency:
		p.addedLatency, err = parseNonNegDuration(v)
	case ParamStallEvery:
		p.stallEvery, err = parseNonNegDuration(v)
	case ParamStallFor:
		p.stallFor, err = parseNonNegDuration(v)
	case ParamDrift:
		p.drift, err = parseNonNegDuration(v)
	case ParamDriftAfter:
		p.driftAfter, err = parseNonNegDuration(v)
	case ParamMaxQueueDelay:
		p.maxQueueDelay, err = parseNonNegDuration(v)
	case ParamSlowdown:
		p.slowdown, err = strconv.ParseFloat(v, 64)
		if err == nil && !(p.slowdown >= 1 && p.slowdown <= 1e6) {
			err = fmt.Errorf("%q is not a factor in [1, 1e6]", v)
		}
	case ParamErrorRate:
		p.errorRate, err = paramkv.Fraction(v)
	case ParamDropRate:
		p.dropRate, err = paramkv.Fraction(v)
	case ParamHang:
		p.hang, err = strconv.ParseBool(v)
	case ParamDynamicBatch:
		p.dynamicBatching, err = strconv.ParseBool(v)
	case ParamSeed:
		p.seed, err = strconv.ParseUint(v, 10, 64)
	case ParamDevice:
		p.device = strings.TrimSpace(v)
	case ParamInstanceCount:
		p.instanceCount, err = strconv.Atoi(v)
		if err == nil && (p.instanceCount < 1 || p.instanceCount > 256) {
			err = fmt.Errorf("%q is not in [1, 256]", v)
		}
	case ParamPreferredBatch:
		p.preferred, err = parseSizes(v)
	default:
		return fmt.Errorf("unknown parameter (known: %s)", strings.Join(knownParams(), ", "))
	}
	return err
}

func knownParams() []string {
	return []string{ParamAddedLatency, ParamDelay, ParamDevice, ParamDrift, ParamDriftAfter, ParamDropRate, ParamDynamicBatch, ParamErrorRate, ParamHang,
		ParamInstanceCount, ParamJitter, ParamMaxQueueDelay, ParamPreferredBatch, ParamSeed, ParamSlowdown,
		ParamStallEvery, ParamStallFor}
}

func isLoadTime(key string) bool { return slices.Contains(loadTimeParams, key) }

func parseNonNegDuration(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, err
	}
	if d < 0 {
		return 0, fmt.Errorf("%q is negative", v)
	}
	return d, nil
}

func parseSizes(v string) ([]int, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		if n < 1 {
			return nil, fmt.Errorf("batch size %d is below 1", n)
		}
		out = append(out, n)
	}
	sort.Ints(out)
	return slices.Compact(out), nil
}
