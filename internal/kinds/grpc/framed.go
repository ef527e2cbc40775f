package grpc

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// perf_analyzer's dynamic gRPC mode reads the messages a generator
// program writes: each a 4-byte length in the byte order of the machine
// (little-endian on x86-64 and arm64, which perfscen reads), then that
// many bytes of a serialised message; a length of 0 ends the messages.
// perf_analyzer sends all of one generator's messages on one call, so
// a framed file is one call for client- and bidi-streaming methods; for
// unary and server-streaming methods, which take one message a call,
// each message is a call of its own.

// framedMsg is one message of a framed file and where it starts.
type framedMsg struct {
	off int
	b   []byte
}

// splitFrames cuts src into its messages.
func splitFrames(src []byte) ([]framedMsg, error) {
	var out []framedMsg
	off := 0
	for off < len(src) {
		if len(src)-off < 4 {
			return nil, fmt.Errorf("byte %d: a length prefix cut short (%d bytes left of 4)", off, len(src)-off)
		}
		n := binary.LittleEndian.Uint32(src[off:])
		if n == 0 {
			break // perf_analyzer stops at a zero length
		}
		if uint64(n) > uint64(len(src)-off-4) {
			return nil, fmt.Errorf("byte %d: message %d is %d bytes long, but %d bytes are left: not perf_analyzer's framing (4-byte little-endian lengths)?",
				off, len(out), n, len(src)-off-4)
		}
		out = append(out, framedMsg{off: off, b: src[off+4 : off+4+int(n)]})
		off += 4 + int(n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no messages (a file of 4-byte lengths, each followed by a serialised message)")
	}
	return out, nil
}

// readFramed reads a framed file of messages for md.
func readFramed(file string, src []byte, md protoreflect.MethodDescriptor) ([]request, error) {
	frames, err := splitFrames(src)
	if err != nil {
		return nil, &inputError{file: file, msg: err.Error()}
	}
	base := filepath.Base(file)
	for i, f := range frames {
		msg := dynamicpb.NewMessage(md.Input())
		if err := proto.Unmarshal(f.b, msg); err != nil {
			return nil, &inputError{file: file, msg: fmt.Sprintf("message %d (byte %d): not a %s: %v", i, f.off, md.Input().FullName(), err)}
		}
		if bad := unknownFields(msg, ""); bad != "" {
			return nil, &inputError{file: file, msg: fmt.Sprintf("message %d (byte %d): %s", i, f.off, bad)}
		}
	}
	if md.IsStreamingClient() {
		r := request{origin: base + " (every message, one call)"}
		for _, f := range frames {
			r.msgs = append(r.msgs, f.b)
		}
		return []request{r}, nil
	}
	out := make([]request, len(frames))
	for i, f := range frames {
		out[i] = request{msgs: [][]byte{f.b}, origin: fmt.Sprintf("%s message %d", base, i)}
	}
	return out, nil
}

// unknownFields names the first field numbers a message holds that its
// type does not define, with the fields it does; "" when there are none.
func unknownFields(m protoreflect.Message, path string) string {
	if raw := m.GetUnknown(); len(raw) > 0 {
		var nums []string
		for len(raw) > 0 {
			num, _, n := protowire.ConsumeField(raw)
			if n < 0 {
				break
			}
			if s := strconv.Itoa(int(num)); !slices.Contains(nums, s) {
				nums = append(nums, s)
			}
			raw = raw[n:]
		}
		md := m.Descriptor()
		where := string(md.FullName())
		if path != "" {
			where = path + " (" + where + ")"
		}
		var have []string
		for i := range md.Fields().Len() {
			fd := md.Fields().Get(i)
			have = append(have, fmt.Sprintf("%d %s", fd.Number(), fd.Name()))
		}
		if len(have) == 0 {
			have = []string{"none"}
		}
		return fmt.Sprintf("field number %s not in %s (fields: %s)", strings.Join(nums, ", "), where, strings.Join(have, ", "))
	}
	var bad string
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Message() == nil {
			return true
		}
		p := join(path, string(fd.Name()))
		switch {
		case fd.IsList():
			for i := range v.List().Len() {
				if bad = unknownFields(v.List().Get(i).Message(), fmt.Sprintf("%s[%d]", p, i)); bad != "" {
					return false
				}
			}
		case fd.IsMap():
			if fd.MapValue().Message() == nil {
				return true
			}
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				bad = unknownFields(mv.Message(), fmt.Sprintf("%s[%v]", p, k.Interface()))
				return bad == ""
			})
		default:
			bad = unknownFields(v.Message(), p)
		}
		return bad == ""
	})
	return bad
}
