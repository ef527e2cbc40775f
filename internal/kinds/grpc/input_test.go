package grpc

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/perfscen/perfscen/runner/plan"
)

// places compiles the test service and returns its methods by name.
func places(t testing.TB) (map[string]protoreflect.MethodDescriptor, *dynamicpb.Types) {
	t.Helper()
	files, err := compileProtos(context.Background(), protoConfig([]string{"places/v1/places.proto"},
		filepath.Join(protoDir, "vendor"), filepath.Join(protoDir, "service")))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]protoreflect.MethodDescriptor{}
	for _, name := range []string{"Nearest", "Within", "Visit"} {
		md, err := findMethod(files, methodName{"places.v1.Places", name}, "")
		if err != nil {
			t.Fatal(err)
		}
		out[name] = md
	}
	return out, dynamicpb.NewTypes(files)
}

func TestReadJSONInput(t *testing.T) {
	ms, types := places(t)
	src := `{"data": [
  {"message": {"location": {"latitude": 1.5, "longitude": -2}, "at": "2026-01-02T03:04:05Z", "tags": ["a"], "hints": {"x": {"name": "p", "kind": "KIND_PARK"}}},
   "expected": {"name": "Cafe", "kind": "KIND_CAFE", "visits": "12"}},
  {"message": {"location": {}}, "expected_fields": {"location.latitude": 1, "kind": 2, "visits": 3}}
]}`
	reqs, err := readJSONInput("in.json", []byte(src), ms["Nearest"], types)
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 2 || len(reqs[0].msgs) != 1 || reqs[0].origin != "in.json:2 data[0]" || reqs[1].origin != "in.json:4 data[1]" {
		t.Fatalf("requests %+v", reqs)
	}
	got := dynamicpb.NewMessage(ms["Nearest"].Input())
	if err := proto.Unmarshal(reqs[0].msgs[0], got); err != nil {
		t.Fatal(err)
	}
	j, _ := protojson.Marshal(got)
	for _, w := range []string{`"latitude":1.5`, `"at":"2026-01-02T03:04:05Z"`, `"kind":"KIND_PARK"`} {
		if !strings.Contains(strings.ReplaceAll(string(j), " ", ""), w) {
			t.Errorf("message %s lacks %s", j, w)
		}
	}
	if e := reqs[0].expect; e == nil || len(e.msgs) != 1 || e.origin != "in.json:2 data[0]" {
		t.Errorf("expectation %+v", e)
	}
	if e := reqs[1].expect; e == nil || len(e.fields) != 3 || e.fields[0].want.Float() != 1 {
		t.Errorf("field expectation %+v", e)
	}
}

func TestReadJSONInputStreaming(t *testing.T) {
	ms, types := places(t)
	within := `{"data": [{"message": {"limit": 2}, "expected": [{"name": "a"}, {"name": "b"}], "expected_fields": {"[1].name": "b", "location.latitude": 0}}]}`
	reqs, err := readJSONInput("w.json", []byte(within), ms["Within"], types)
	if err != nil {
		t.Fatal(err)
	}
	if e := reqs[0].expect; len(e.msgs) != 2 || e.fields[0].reply != 1 || e.fields[1].reply != -1 {
		t.Errorf("expectation %+v", e)
	}
	visit := `{"data": [{"messages": [{"latitude": 1}, {"latitude": 2}, {"latitude": 3}]}]}`
	reqs, err = readJSONInput("v.json", []byte(visit), ms["Visit"], types)
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 1 || len(reqs[0].msgs) != 3 {
		t.Errorf("client-streaming call %+v", reqs)
	}
}

func TestReadJSONInputErrors(t *testing.T) {
	ms, types := places(t)
	cases := []struct {
		name, method, src, want string
	}{
		{"unknown nested field", "Nearest", "{\"data\": [\n  {\"message\": {\"location\": {\"lattitude\": 1}}}\n]}",
			`f.json:2:29: data[0].message.location.lattitude: no field "lattitude" in geo.type.LatLng (fields: latitude, longitude)`},
		{"unknown field in a list of messages", "Visit", `{"data": [{"messages": [{"latitude": 1}, {"lat": 2}]}]}`,
			`f.json:1:43: data[0].messages[1].lat: no field "lat" in geo.type.LatLng (fields: latitude, longitude)`},
		{"unknown field in a map value", "Nearest", `{"data": [{"message": {"hints": {"k": {"nme": "x"}}}}]}`,
			`f.json:1:40: data[0].message.hints["k"].nme: no field "nme" in places.v1.Place`},
		{"bad value", "Nearest", "{\"data\": [{\"message\": {\"location\": {\"latitude\": \"north\"}}}]}",
			`f.json:1:49: data[0].message: invalid value for double field latitude: "north"`},
		{"bad timestamp", "Nearest", `{"data": [{"message": {"at": "yesterday"}}]}`, `f.json:1:30: data[0].message: invalid google.protobuf.Timestamp value "yesterday"`},
		{"a generator", "Nearest", `{"data": [{"message_generator": "python3 gen.py"}]}`, "perfscen runs no programs"},
		{"unknown entry key", "Nearest", `{"data": [{"message": {}, "expect": {}}]}`, `f.json:1:27: data[0]: unknown key "expect" (keys: message, messages, expected, expected_fields)`},
		{"no message", "Nearest", `{"data": [{}]}`, `data[0]: no message`},
		{"both", "Nearest", `{"data": [{"message": {}, "messages": [{}]}]}`, "give message or messages, not both"},
		{"several messages for a unary method", "Nearest", `{"data": [{"messages": [{}, {}]}]}`, "takes one message per call"},
		{"message not an object", "Nearest", `{"data": [{"message": [1]}]}`, "data[0].message: want a places.v1.NearestRequest object, found a list"},
		{"streaming reply not a list", "Within", `{"data": [{"message": {}, "expected": {"name": "a"}}]}`, "streams its replies: want the list of every reply"},
		{"bad field path", "Nearest", `{"data": [{"message": {}, "expected_fields": {"location.altitude": 1}}]}`,
			`data[0].expected_fields["location.altitude"]: no field "altitude" in geo.type.LatLng (fields: latitude, longitude)`},
		{"reply index on a unary method", "Nearest", `{"data": [{"message": {}, "expected_fields": {"[0].name": "a"}}]}`, "applies only to streaming replies"},
		{"bad expected value", "Nearest", `{"data": [{"message": {}, "expected_fields": {"visits": "many"}}]}`, `expected_fields["visits"]: invalid value for int64 field visits`},
		{"unknown expected field", "Nearest", `{"data": [{"message": {}, "expected": {"nam": "a"}}]}`, `data[0].expected.nam: no field "nam" in places.v1.Place`},
		{"not an object", "Nearest", `[1, 2]`, `f.json:1:1: want an object {"data": [...]}, found a list`},
		{"other top-level key", "Nearest", `{"data": [{"message": {}}], "validation_data": []}`, `unknown key "validation_data"`},
		{"no data", "Nearest", `{}`, `no "data"`},
		{"empty data", "Nearest", `{"data": []}`, `"data" must be a non-empty list`},
		{"duplicate key", "Nearest", `{"data": [{"message": {"tags": [], "tags": []}}]}`, `f.json:1:36: key "tags" appears twice`},
		{"syntax error", "Nearest", "{\"data\": [\n  {\"message\": {,}}]}", "f.json:2:16: invalid character ','"},
		{"cut short", "Nearest", `{"data": [{"message": {}`, "unexpected end of file"},
		{"trailing data", "Nearest", `{"data": [{"message": {}}]} {}`, "f.json:1:29: unexpected data after the top-level value"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readJSONInput("f.json", []byte(tc.src), ms[tc.method], types)
			if err == nil {
				t.Fatal("read without error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error:\n  %v\nwant it to contain:\n  %s", err, tc.want)
			}
		})
	}
}

// frames writes messages in perf_analyzer's framing.
func frames(msgs ...[]byte) []byte {
	var out []byte
	for _, m := range msgs {
		out = binary.LittleEndian.AppendUint32(out, uint32(len(m)))
		out = append(out, m...)
	}
	return out
}

func TestReadFramed(t *testing.T) {
	ms, _ := places(t)
	pt := func(lat float64) []byte {
		m := dynamicpb.NewMessage(ms["Visit"].Input())
		m.Set(m.Descriptor().Fields().ByName("latitude"), protoreflect.ValueOfFloat64(lat))
		b, _ := proto.Marshal(m)
		return b
	}
	src := append(frames(pt(1), pt(2), pt(3)), 0, 0, 0, 0, 0xde, 0xad) // a zero length ends them
	// Client streaming: the file is one call, as perf_analyzer sends it.
	reqs, err := readFramed("pts.bin", src, ms["Visit"])
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 1 || len(reqs[0].msgs) != 3 {
		t.Fatalf("client-streaming: %d calls", len(reqs))
	}
	// Unary: one call a message.
	area := dynamicpb.NewMessage(ms["Within"].Input())
	area.Set(area.Descriptor().Fields().ByName("limit"), protoreflect.ValueOfUint32(4))
	ab, _ := proto.Marshal(area)
	reqs, err = readFramed("areas.bin", frames(ab, ab), ms["Within"])
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 2 || reqs[1].origin != "areas.bin message 1" {
		t.Fatalf("server-streaming: %+v", reqs)
	}

	// Field 9 is not in geo.type.LatLng.
	unknown := append(pt(1), 0x48, 0x01)
	cases := []struct {
		name string
		src  []byte
		md   protoreflect.MethodDescriptor
		want string
	}{
		{"cut length", []byte{3, 0}, ms["Visit"], "byte 0: a length prefix cut short (2 bytes left of 4)"},
		{"cut message", append(frames(pt(1)), 9, 0, 0, 0, 1), ms["Visit"], "is 9 bytes long, but 1 bytes are left"},
		{"empty", nil, ms["Visit"], "no messages"},
		{"only the end", []byte{0, 0, 0, 0}, ms["Visit"], "no messages"},
		{"not the message", frames([]byte{0xff, 0xff}), ms["Visit"], "message 0 (byte 0): not a geo.type.LatLng"},
		{"unknown field", frames(pt(1), unknown), ms["Visit"], "message 1 (byte 13): field number 9 not in geo.type.LatLng (fields: 1 latitude, 2 longitude)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readFramed("f.bin", tc.src, tc.md)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestReadInputsKinds(t *testing.T) {
	ms, types := places(t)
	dir := t.TempDir()
	js := filepath.Join(dir, "a.json")
	bin := filepath.Join(dir, "a.pb")
	if err := os.WriteFile(js, []byte(`{"data": [{"message": {"limit": 1}}, {"message": {"limit": 2}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, frames([]byte{0x18, 0x03}), 0o644); err != nil {
		t.Fatal(err)
	}
	reqs, err := readInputs(plan.Input{Kind: "json", Paths: []string{js, bin}}, ms["Within"], types)
	if err != nil || len(reqs) != 3 {
		t.Fatalf("%d calls, %v", len(reqs), err)
	}
	if reqs, err := readInputs(plan.Input{Kind: "zero"}, ms["Within"], types); err != nil || len(reqs) != 1 || len(reqs[0].msgs[0]) != 0 {
		t.Errorf("zero: %+v %v", reqs, err)
	}
	if _, err := readInputs(plan.Input{Kind: "random"}, ms["Within"], types); err == nil || !strings.Contains(err.Error(), "random data has no meaning") {
		t.Errorf("random: %v", err)
	}
	if _, err := readInputs(plan.Input{Kind: "dir", Paths: []string{dir}}, ms["Within"], types); err == nil {
		t.Error("a folder was read")
	}
}
