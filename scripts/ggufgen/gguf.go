package main

import (
	"bufio"
	"encoding/binary"
	"math"
)

// gguf writes GGUF's little-endian primitives, counting bytes and keeping
// the first error.
type gguf struct {
	w   *bufio.Writer
	n   uint64
	err error
}

// GGUF metadata value types.
const (
	typeU32    = 4
	typeI32    = 5
	typeF32    = 6
	typeBool   = 7
	typeString = 8
	typeArray  = 9
)

func (g *gguf) raw(b []byte) {
	if g.err != nil {
		return
	}
	var n int
	n, g.err = g.w.Write(b)
	g.n += uint64(n)
}

func (g *gguf) u32(v uint32) { g.raw(binary.LittleEndian.AppendUint32(nil, v)) }
func (g *gguf) u64(v uint64) { g.raw(binary.LittleEndian.AppendUint64(nil, v)) }
func (g *gguf) f32(v float32) {
	g.u32(math.Float32bits(v))
}
func (g *gguf) str(s string) { g.u64(uint64(len(s))); g.raw([]byte(s)) }

func (g *gguf) kvString(k, v string)      { g.str(k); g.u32(typeString); g.str(v) }
func (g *gguf) kvU32(k string, v uint32)  { g.str(k); g.u32(typeU32); g.u32(v) }
func (g *gguf) kvF32(k string, v float32) { g.str(k); g.u32(typeF32); g.f32(v) }
func (g *gguf) kvBool(k string, v bool) {
	g.str(k)
	g.u32(typeBool)
	b := byte(0)
	if v {
		b = 1
	}
	g.raw([]byte{b})
}

func (g *gguf) kvStrings(k string, vs []string) {
	g.str(k)
	g.u32(typeArray)
	g.u32(typeString)
	g.u64(uint64(len(vs)))
	for _, v := range vs {
		g.str(v)
	}
}

func (g *gguf) kvF32s(k string, vs []float32) {
	g.str(k)
	g.u32(typeArray)
	g.u32(typeF32)
	g.u64(uint64(len(vs)))
	for _, v := range vs {
		g.f32(v)
	}
}

func (g *gguf) kvI32s(k string, vs []int32) {
	g.str(k)
	g.u32(typeArray)
	g.u32(typeI32)
	g.u64(uint64(len(vs)))
	for _, v := range vs {
		g.u32(uint32(v))
	}
}
