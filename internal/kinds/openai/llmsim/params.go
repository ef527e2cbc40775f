package llmsim

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/perfscen/perfscen/internal/refserver/paramkv"
)

// Parameter keys of a simulated engine (model parameters, as the reference
// server's other models take them: --model-param llm.decode_slowdown=1.1).
const (
	ParamPrefillBase     = "prefill_base"         // fixed part of a prefill (duration)
	ParamPrefillPerToken = "prefill_per_token"    // prefill time per input token (duration)
	ParamDecodeBase      = "decode_base"          // one decode step with one sequence (duration)
	ParamDecodePerSeq    = "decode_per_seq"       // added to a step per sequence in flight (duration)
	ParamDecodeSlowdown  = "decode_slowdown"      // multiplies every decode step (float ≥ 0.01)
	ParamMaxBatch        = "max_batch"            // sequences decoded together; more wait (int ≥ 1)
	ParamChunkTokens     = "chunk_tokens"         // tokens per streamed chunk (int ≥ 1)
	ParamDefaultMax      = "default_max_tokens"   // output length when a request sets none (int ≥ 1)
	ParamUsage           = "usage"                // report usage (bool, default true)
	ParamErrorRate       = "error_rate"           // fraction answered HTTP 500 before any token
	ParamMidstreamErrors = "midstream_error_rate" // fraction failing with an error event mid-stream
	ParamStallEvery      = paramkv.StallEvery     // the engine pauses once per this period (duration)
	ParamStallFor        = paramkv.StallFor       // for this long (duration)
	ParamSeed            = "seed"                 // token and fault RNG seed (uint64)
	ParamPrefixCache     = "prefix_cache"         // reuse cached prompt blocks (on/off, default on)
	ParamKVBlockSize     = "kv_block_size"        // tokens per KV-cache block (int ≥ 1)
	ParamKVCacheBlocks   = "kv_cache_blocks"      // KV-cache size in blocks (int ≥ 1)
)

// Params are a simulated engine's settings, parsed and checked.
type Params struct {
	PrefillBase, PrefillPerToken time.Duration
	DecodeBase, DecodePerSeq     time.Duration
	DecodeSlowdown               float64
	MaxBatch                     int
	ChunkTokens                  int
	DefaultMaxTokens             int
	Usage                        bool
	ErrorRate, MidstreamErrors   float64
	StallEvery, StallFor         time.Duration
	Seed                         uint64
	// PrefixCache lets a prompt's leading blocks that an earlier request
	// computed skip their prefill; KVBlockSize tokens make a block and
	// KVCacheBlocks blocks the cache.
	PrefixCache   bool
	KVBlockSize   int
	KVCacheBlocks int
}

// defaults are a small model on a fast GPU, scaled so one 2-core machine
// can drive it: ~8 ms per token alone, ~13 ms at 64 sequences.
var defaults = map[string]Params{
	"llm": {PrefillBase: 2 * time.Millisecond, PrefillPerToken: 20 * time.Microsecond,
		DecodeBase: 8 * time.Millisecond, DecodePerSeq: 80 * time.Microsecond, DecodeSlowdown: 1,
		MaxBatch: 256, ChunkTokens: 1, DefaultMaxTokens: 64, Usage: true, Seed: 1,
		PrefixCache: true, KVBlockSize: 16, KVCacheBlocks: 4096},
	// The same engine as if quantized: decode ~25% faster, prefill alike.
	"llm_fp8": {PrefillBase: 2 * time.Millisecond, PrefillPerToken: 20 * time.Microsecond,
		DecodeBase: 6 * time.Millisecond, DecodePerSeq: 60 * time.Microsecond, DecodeSlowdown: 1,
		MaxBatch: 256, ChunkTokens: 1, DefaultMaxTokens: 64, Usage: true, Seed: 1,
		PrefixCache: true, KVBlockSize: 16, KVCacheBlocks: 4096},
}

// Models lists the simulated engines, sorted.
func Models() []string {
	names := make([]string, 0, len(defaults))
	for n := range defaults {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// IsModel reports whether name is a simulated engine.
func IsModel(name string) bool { _, ok := defaults[name]; return ok }

// ParseParams applies kv over model's defaults; keys apply in sorted order
// so an error names the same key every time.
func ParseParams(model string, kv map[string]string) (Params, error) {
	p, ok := defaults[model]
	if !ok {
		return p, fmt.Errorf("unknown LLM model %q (simulated: %s)", model, strings.Join(Models(), ", "))
	}
	if err := paramkv.Apply(kv, p.set); err != nil {
		return p, err
	}
	return p, paramkv.CheckStall(p.StallEvery, p.StallFor)
}

func (p *Params) set(key, v string) error {
	var err error
	switch key {
	case ParamPrefillBase:
		p.PrefillBase, err = duration(v)
	case ParamPrefillPerToken:
		p.PrefillPerToken, err = duration(v)
	case ParamDecodeBase:
		p.DecodeBase, err = duration(v)
	case ParamDecodePerSeq:
		p.DecodePerSeq, err = duration(v)
	case ParamDecodeSlowdown:
		p.DecodeSlowdown, err = strconv.ParseFloat(v, 64)
		if err == nil && !(p.DecodeSlowdown >= 0.01 && p.DecodeSlowdown <= 1e4) {
			err = fmt.Errorf("%q is not a factor in [0.01, 1e4]", v)
		}
	case ParamMaxBatch:
		p.MaxBatch, err = intIn(v, 1, 1<<16)
	case ParamChunkTokens:
		p.ChunkTokens, err = intIn(v, 1, 1<<16)
	case ParamDefaultMax:
		p.DefaultMaxTokens, err = intIn(v, 1, 1<<20)
	case ParamUsage:
		p.Usage, err = strconv.ParseBool(v)
	case ParamErrorRate:
		p.ErrorRate, err = paramkv.Fraction(v)
	case ParamMidstreamErrors:
		p.MidstreamErrors, err = paramkv.Fraction(v)
	case ParamStallEvery:
		p.StallEvery, err = duration(v)
	case ParamStallFor:
		p.StallFor, err = duration(v)
	case ParamSeed:
		p.Seed, err = strconv.ParseUint(v, 10, 64)
	case ParamPrefixCache:
		p.PrefixCache, err = onOff(v)
	case ParamKVBlockSize:
		p.KVBlockSize, err = intIn(v, 1, 1<<12)
	case ParamKVCacheBlocks:
		p.KVCacheBlocks, err = intIn(v, 1, 1<<24)
	default:
		return fmt.Errorf("unknown parameter (known: %s)", strings.Join(knownParams(), ", "))
	}
	return err
}

// ParamKeys lists the parameter keys, sorted.
func ParamKeys() []string { return knownParams() }

func knownParams() []string {
	k := []string{ParamPrefillBase, ParamPrefillPerToken, ParamDecodeBase, ParamDecodePerSeq, ParamDecodeSlowdown,
		ParamMaxBatch, ParamChunkTokens, ParamDefaultMax, ParamUsage, ParamErrorRate, ParamMidstreamErrors,
		ParamStallEvery, ParamStallFor, ParamSeed, ParamPrefixCache, ParamKVBlockSize, ParamKVCacheBlocks}
	slices.Sort(k)
	return k
}

// onOff reads a switch: on/off as the docs write it, or a boolean.
func onOff(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%q is neither on nor off", v)
	}
	return b, nil
}

func duration(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err == nil && (d < 0 || d > time.Minute) {
		err = fmt.Errorf("%q is not in [0, 1m]", v)
	}
	return d, err
}

func intIn(v string, lo, hi int) (int, error) {
	n, err := strconv.Atoi(v)
	if err == nil && (n < lo || n > hi) {
		err = fmt.Errorf("%q is not in [%d, %d]", v, lo, hi)
	}
	return n, err
}

// paramDocs say what each parameter does, for `perfscen serve --help`.
var paramDocs = map[string]string{
	ParamPrefillBase:     "fixed part of a prefill",
	ParamPrefillPerToken: "prefill time per input token",
	ParamDecodeBase:      "one decode step with one sequence in flight",
	ParamDecodePerSeq:    "added to every step per sequence in flight",
	ParamDecodeSlowdown:  "multiplies every decode step (1.1: a 10% slower decode)",
	ParamMaxBatch:        "sequences decoded together; more wait",
	ParamChunkTokens:     "tokens per streamed chunk",
	ParamDefaultMax:      "output tokens when a request sets no max_tokens",
	ParamUsage:           "report usage (false: never, even when asked)",
	ParamErrorRate:       "fraction of requests answered HTTP 500 before any token",
	ParamMidstreamErrors: "fraction failing with an error event after some tokens",
	ParamStallEvery:      "the engine pauses once per this period (0: never)",
	ParamStallFor:        "for this long",
	ParamSeed:            "token and fault random seed",
	ParamPrefixCache:     "reuse the cached KV blocks of a prompt's prefix (off: every prompt prefills whole)",
	ParamKVBlockSize:     "tokens per KV-cache block",
	ParamKVCacheBlocks:   "KV-cache size in blocks (usage and prefix-cache eviction)",
}

// value is parameter key of p as it would be written.
func (p Params) value(key string) string {
	switch key {
	case ParamPrefillBase:
		return p.PrefillBase.String()
	case ParamPrefillPerToken:
		return p.PrefillPerToken.String()
	case ParamDecodeBase:
		return p.DecodeBase.String()
	case ParamDecodePerSeq:
		return p.DecodePerSeq.String()
	case ParamDecodeSlowdown:
		return strconv.FormatFloat(p.DecodeSlowdown, 'g', -1, 64)
	case ParamMaxBatch:
		return strconv.Itoa(p.MaxBatch)
	case ParamChunkTokens:
		return strconv.Itoa(p.ChunkTokens)
	case ParamDefaultMax:
		return strconv.Itoa(p.DefaultMaxTokens)
	case ParamUsage:
		return strconv.FormatBool(p.Usage)
	case ParamErrorRate:
		return strconv.FormatFloat(p.ErrorRate, 'g', -1, 64)
	case ParamMidstreamErrors:
		return strconv.FormatFloat(p.MidstreamErrors, 'g', -1, 64)
	case ParamStallEvery:
		return p.StallEvery.String()
	case ParamStallFor:
		return p.StallFor.String()
	case ParamSeed:
		return strconv.FormatUint(p.Seed, 10)
	case ParamPrefixCache:
		if p.PrefixCache {
			return "on"
		}
		return "off"
	case ParamKVBlockSize:
		return strconv.Itoa(p.KVBlockSize)
	case ParamKVCacheBlocks:
		return strconv.Itoa(p.KVCacheBlocks)
	}
	return ""
}

// ParamHelp lists every parameter, sorted, with each engine's default
// and what it does: one line each, indented for a command's help.
func ParamHelp() string {
	var b strings.Builder
	models := Models()
	for _, k := range knownParams() {
		def := defaults[models[0]].value(k)
		same := true
		defs := make([]string, len(models))
		for i, m := range models {
			v := defaults[m].value(k)
			same = same && v == def
			defs[i] = m + " " + v
		}
		if !same {
			def = strings.Join(defs, ", ")
		}
		fmt.Fprintf(&b, "  %-20s %-23s %s\n", k, def, paramDocs[k])
	}
	return b.String()
}
