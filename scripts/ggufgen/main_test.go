package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"testing"
)

// The file opens as GGUF v3 with every tensor and metadata entry counted,
// and its tensor data starts aligned; the same seed gives the same bytes.
func TestWritesGGUF(t *testing.T) {
	gen := func(seed uint64) []byte {
		var b bytes.Buffer
		w := bufio.NewWriter(&b)
		if err := write(w, config{layers: 2, embd: 16, heads: 2, ff: 32, ctx: 128}, seed); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	b := gen(1)
	if string(b[:4]) != "GGUF" || binary.LittleEndian.Uint32(b[4:]) != 3 {
		t.Fatalf("header %q", b[:8])
	}
	if n := binary.LittleEndian.Uint64(b[8:]); n != 3+2*9 {
		t.Errorf("%d tensors, want 21", n)
	}
	if n := binary.LittleEndian.Uint64(b[16:]); n != 20 {
		t.Errorf("%d metadata entries, want 20", n)
	}
	if len(b)%32 != 0 {
		t.Errorf("file length %d is not aligned to 32", len(b))
	}
	if !bytes.Equal(b, gen(1)) || bytes.Equal(b, gen(2)) {
		t.Error("the seed does not decide the bytes")
	}
}

// llama.cpp aborts on a vocabulary with a piece twice.
func TestVocabularyHasNoDuplicates(t *testing.T) {
	tokens, types := vocab()
	seen := map[string]bool{}
	for _, tok := range tokens {
		if seen[tok] {
			t.Errorf("%q twice", tok)
		}
		seen[tok] = true
	}
	if len(types) != len(tokens) {
		t.Errorf("%d types for %d tokens", len(types), len(tokens))
	}
}

// docs/llm.md gives the vocabulary's size: 3 control tokens, 256 bytes,
// 12 words and 52 letter pieces, one of them ("▁a") a word already.
func TestVocabularySize(t *testing.T) {
	if tokens, _ := vocab(); len(tokens) != 322 {
		t.Errorf("%d tokens, docs/llm.md says 322", len(tokens))
	}
}

// The output rows of the control tokens and of the bytes 0x80-0xFF weigh
// the embedding's constant component negatively, so no reply is empty.
func TestControlTokensSteeredOff(t *testing.T) {
	tokens, _ := vocab()
	if tokens[0] != "<unk>" || tokens[2] != "</s>" || tokens[3+0x80] != "<0x80>" || tokens[3+0x100] != "▁" {
		t.Fatalf("control tokens moved: %q", tokens[:3])
	}
	if steer("token_embd.weight", 57, 0, 0.01) != 1 || steer("output.weight", 2, 0, 0.01) >= -1 ||
		steer("output.weight", 3, 0, 0.01) != 0.01 || steer("blk.0.attn_q.weight", 0, 0, 0.01) != 0.01 ||
		steer("output.weight", 3+0x80, 0, 0.01) >= -1 || steer("output.weight", 3+0xFF, 0, 0.01) >= -1 ||
		steer("output.weight", 3+0x7F, 0, 0.01) != 0.01 || steer("output.weight", 3+0x100, 0, 0.01) != 0.01 {
		t.Error("steering touches the wrong weights")
	}
}
