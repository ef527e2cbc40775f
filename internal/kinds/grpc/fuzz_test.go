package grpc

import (
	"encoding/binary"
	"strings"
	"testing"
)

// The framed-binary reader takes any bytes: it returns messages that lie
// inside the input, or an error, and never panics.
func FuzzReadFramed(f *testing.F) {
	ms, _ := places(f)
	f.Add(frames([]byte{0x09, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f}, []byte{}))
	f.Add(append(frames([]byte{0x18, 0x03}), 0, 0, 0, 0, 1, 2, 3))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 1})
	f.Add([]byte{1, 0})
	f.Fuzz(func(t *testing.T, src []byte) {
		msgs, err := splitFrames(src)
		if err == nil {
			total := 0
			for _, m := range msgs {
				if m.off < 0 || m.off+4+len(m.b) > len(src) || int(binary.LittleEndian.Uint32(src[m.off:])) != len(m.b) {
					t.Fatalf("frame at %d of %d bytes lies outside the input (%d bytes)", m.off, len(m.b), len(src))
				}
				total += 4 + len(m.b)
			}
			if total > len(src) {
				t.Fatalf("frames cover %d bytes of %d", total, len(src))
			}
		}
		for _, name := range []string{"Nearest", "Visit"} {
			reqs, err := readFramed("f.bin", src, ms[name])
			if err == nil && len(reqs) == 0 {
				t.Fatal("no calls and no error")
			}
		}
	})
}

// The JSON input reader takes any bytes: calls, or an error that names
// the file (and a line when it has one), never a panic.
func FuzzReadJSONInput(f *testing.F) {
	ms, types := places(f)
	for _, s := range []string{
		`{"data": [{"message": {"location": {"latitude": 1}, "tags": ["a"], "hints": {"k": {"name": "x"}}}, "expected": {"name": "p"}}]}`,
		`{"data": [{"messages": [{"latitude": 1}, {"longitude": 2}], "expected_fields": {"stops": 2, "distance": 1.5}}]}`,
		`{"data": [{"message": {"limit": 3}, "expected": [{"name": "a"}], "expected_fields": {"[0].location.latitude": 0}}]}`,
		`{"data": [{"message": {"at": "2026-01-01T00:00:00Z", "locaton": 1}}]}`,
		`{"data": [{"message_generator": "x"}]}`,
		`[{"data": 1}]`,
		`{"data": [{"message": {"tags": [1, 2, {"a": [[[[]]]]}]}}]} trailing`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, name := range []string{"Nearest", "Within", "Visit"} {
			reqs, err := readJSONInput("f.json", src, ms[name], types)
			if err != nil {
				if !strings.HasPrefix(err.Error(), "f.json") {
					t.Fatalf("error does not name the file: %v", err)
				}
				continue
			}
			if len(reqs) == 0 {
				t.Fatal("no calls and no error")
			}
			for _, r := range reqs {
				if len(r.msgs) == 0 {
					t.Fatal("a call without messages")
				}
			}
		}
	})
}
