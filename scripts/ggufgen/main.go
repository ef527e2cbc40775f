// Command ggufgen writes a tiny llama model with random weights as a GGUF
// file: a real OpenAI-compatible server (llama.cpp, Ollama) can load and
// serve it on a CPU in milliseconds per token, so perfscen's LLM scenarios
// and its TTFT timing can be checked against a real engine without
// downloading any model (make conformance-llm, docs/llm.md).
//
//	go run ./scripts/ggufgen -o /tmp/tiny.gguf
//
// The model says nothing useful: its weights are seeded noise. Its
// tokenizer is SentencePiece-style (tokenizer.ggml.model "llama") with
// byte fallback, so any prompt tokenizes.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
)

func main() {
	out := flag.String("o", "tiny.gguf", "output file")
	cfg := config{}
	flag.IntVar(&cfg.layers, "layers", 2, "transformer blocks")
	flag.IntVar(&cfg.embd, "embd", 64, "embedding width")
	flag.IntVar(&cfg.heads, "heads", 4, "attention heads")
	flag.IntVar(&cfg.ff, "ff", 128, "feed-forward width")
	flag.IntVar(&cfg.ctx, "ctx", 2048, "context length")
	seed := flag.Uint64("seed", 1, "weight seed")
	flag.Parse()
	f, err := os.Create(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	w := bufio.NewWriter(f)
	err = write(w, cfg, *seed)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ggufgen:", err)
		os.Exit(1)
	}
}

type config struct{ layers, embd, heads, ff, ctx int }

// vocab is the tokenizer: <unk>, <s>, </s>, the 256 byte tokens, then
// word pieces, so that ordinary text needs few byte fallbacks.
func vocab() (tokens []string, types []int32) {
	tokens = []string{"<unk>", "<s>", "</s>"}
	types = []int32{2, 3, 3} // unknown, control, control
	for b := 0; b < 256; b++ {
		tokens = append(tokens, fmt.Sprintf("<0x%02X>", b))
		types = append(types, 6) // byte
	}
	for _, p := range []string{"▁", "▁the", "▁a", "▁of", "▁and", "▁to", "▁in", "▁is", "▁hello", "▁world", "▁you", "▁it"} {
		tokens = append(tokens, p)
		types = append(types, 1)
	}
	for c := 'a'; c <= 'z'; c++ {
		tokens = append(tokens, string(c), "▁"+string(c))
		types = append(types, 1, 1)
	}
	// Every piece once: llama.cpp refuses a vocabulary with duplicates
	// ("▁a" is a word and a letter piece).
	seen := map[string]bool{}
	var outT []string
	var outY []int32
	for i, tok := range tokens {
		if !seen[tok] {
			seen[tok] = true
			outT, outY = append(outT, tok), append(outY, types[i])
		}
	}
	return outT, outY
}

func write(w *bufio.Writer, cfg config, seed uint64) error {
	tokens, types := vocab()
	scores := make([]float32, len(tokens))
	for i := range scores {
		scores[i] = -float32(i)
	}
	g := &gguf{w: w}
	kv := []func(){
		func() { g.kvString("general.architecture", "llama") },
		func() { g.kvString("general.name", "perfscen-tiny-random") },
		func() { g.kvU32("general.file_type", 0) }, // all F32
		func() { g.kvU32("llama.context_length", uint32(cfg.ctx)) },
		func() { g.kvU32("llama.embedding_length", uint32(cfg.embd)) },
		func() { g.kvU32("llama.block_count", uint32(cfg.layers)) },
		func() { g.kvU32("llama.feed_forward_length", uint32(cfg.ff)) },
		func() { g.kvU32("llama.attention.head_count", uint32(cfg.heads)) },
		func() { g.kvU32("llama.attention.head_count_kv", uint32(cfg.heads)) },
		func() { g.kvU32("llama.rope.dimension_count", uint32(cfg.embd/cfg.heads)) },
		func() { g.kvF32("llama.attention.layer_norm_rms_epsilon", 1e-5) },
		func() { g.kvU32("llama.vocab_size", uint32(len(tokens))) },
		func() { g.kvString("tokenizer.ggml.model", "llama") },
		func() { g.kvStrings("tokenizer.ggml.tokens", tokens) },
		func() { g.kvF32s("tokenizer.ggml.scores", scores) },
		func() { g.kvI32s("tokenizer.ggml.token_type", types) },
		func() { g.kvU32("tokenizer.ggml.unknown_token_id", 0) },
		func() { g.kvU32("tokenizer.ggml.bos_token_id", 1) },
		func() { g.kvU32("tokenizer.ggml.eos_token_id", 2) },
		func() { g.kvBool("tokenizer.ggml.add_bos_token", true) },
	}
	type tensor struct {
		name string
		dims []uint64 // GGML order: the innermost (row length) first
		norm bool     // a norm's weights are ones
	}
	n, v, ff := uint64(cfg.embd), uint64(len(tokens)), uint64(cfg.ff)
	ts := []tensor{{"token_embd.weight", []uint64{n, v}, false}, {"output_norm.weight", []uint64{n}, true}, {"output.weight", []uint64{n, v}, false}}
	for i := 0; i < cfg.layers; i++ {
		p := fmt.Sprintf("blk.%d.", i)
		ts = append(ts,
			tensor{p + "attn_norm.weight", []uint64{n}, true},
			tensor{p + "attn_q.weight", []uint64{n, n}, false},
			tensor{p + "attn_k.weight", []uint64{n, n}, false},
			tensor{p + "attn_v.weight", []uint64{n, n}, false},
			tensor{p + "attn_output.weight", []uint64{n, n}, false},
			tensor{p + "ffn_norm.weight", []uint64{n}, true},
			tensor{p + "ffn_gate.weight", []uint64{n, ff}, false},
			tensor{p + "ffn_up.weight", []uint64{n, ff}, false},
			tensor{p + "ffn_down.weight", []uint64{ff, n}, false},
		)
	}
	// Header: magic, version 3, tensor count, metadata count.
	g.raw([]byte("GGUF"))
	g.u32(3)
	g.u64(uint64(len(ts)))
	g.u64(uint64(len(kv)))
	for _, f := range kv {
		f()
	}
	const align = 32
	var off uint64
	for _, t := range ts {
		g.str(t.name)
		g.u32(uint32(len(t.dims)))
		for _, d := range t.dims {
			g.u64(d)
		}
		g.u32(0) // GGML_TYPE_F32
		g.u64(off)
		off += pad(4*count(t.dims), align)
	}
	g.raw(make([]byte, pad(g.n, align)-g.n))
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for _, t := range ts {
		c := count(t.dims)
		for i := uint64(0); i < c; i++ {
			x := float32(1)
			if !t.norm {
				x = float32(rng.NormFloat64() * 0.05)
			}
			g.f32(steer(t.name, i/n, i%n, x))
		}
		g.raw(make([]byte, pad(4*c, align)-4*c))
	}
	return g.err
}

// Random weights would now and then make a reply with no text: </s> (or
// another control token, which renders as nothing) sampled first, or a
// short reply of byte tokens 0x80-0xFF alone, which are no UTF-8 on their
// own and which a server holds back until a character is complete. An
// LLM benchmark rightly counts an empty reply as failed, and a server
// such as Ollama has no ignore_eos. So the model is steered off those
// tokens: component 0 of every token's embedding is 1 where the rest are
// noise of 0.05, so the residual stream's component 0 stays clearly
// positive through the blocks (their noise adds about ±0.2), and the
// output rows of the steered-off tokens weigh that component at -10: their
// logits sit some 70 below the others', whose spread is about 0.4.
// Nothing else changes, so the model costs the same per token.
func steer(tensor string, row, col uint64, x float32) float32 {
	switch {
	case tensor == "token_embd.weight" && col == 0:
		return 1
	case tensor == "output.weight" && col == 0 && neverSampled(row):
		return -10
	}
	return x
}

// controlTokens are the first ids of vocab: <unk>, <s>, </s>; the byte
// tokens <0x00>…<0xFF> follow.
const controlTokens = 3

// neverSampled are the control tokens and the bytes that are no
// character on their own.
func neverSampled(id uint64) bool {
	return id < controlTokens || id >= controlTokens+0x80 && id < controlTokens+0x100
}

func count(dims []uint64) uint64 {
	c := uint64(1)
	for _, d := range dims {
		c *= d
	}
	return c
}

func pad(n, align uint64) uint64 { return (n + align - 1) / align * align }
