package sse

import (
	"bytes"
	"strings"
	"testing"
)

// BenchmarkReader parses a chat-completions stream of 256 chunks; the
// figure per op divided by 256 is the parser's cost per token chunk.
func BenchmarkReader(b *testing.B) {
	var sb strings.Builder
	for i := 0; i < 256; i++ {
		sb.WriteString(`data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"tok"}}]}` + "\n\n")
	}
	sb.WriteString("data: [DONE]\n\n")
	stream := []byte(sb.String())
	rd := NewReader(nil)
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		rd.Reset(bytes.NewReader(stream))
		for {
			if _, err := rd.Next(); err != nil {
				break
			}
		}
	}
}
