package grpc

import (
	"math"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"
)

func TestFloatsMatch(t *testing.T) {
	cases := []struct {
		a, b, tol float64
		want      bool
	}{
		{1, 1, 0, true},
		{1, 1 + 1e-6, 0, true}, // the default tolerance, 1e-5
		{1, 1.001, 0, false},
		{1000, 1000.5, 1e-3, true}, // relative
		{0, 2e-3, 1e-3, false},
		{math.NaN(), math.NaN(), 0, true},
		{math.Inf(1), math.Inf(1), 0, true},
		{math.Inf(1), math.MaxFloat64, 0.5, false},
	}
	for _, tc := range cases {
		if got := floatsMatch(tc.a, tc.b, tc.tol); got != tc.want {
			t.Errorf("floatsMatch(%v, %v, %v) = %v", tc.a, tc.b, tc.tol, got)
		}
	}
}

func TestExpectationCheck(t *testing.T) {
	ms, types := places(t)
	place := ms["Nearest"].Output()
	reply := func(j string) []byte {
		m := dynamicpb.NewMessage(place)
		if err := protojson.Unmarshal([]byte(j), m); err != nil {
			t.Fatal(err)
		}
		b, _ := proto.Marshal(m)
		return b
	}
	got := reply(`{"name": "Cafe", "kind": "KIND_CAFE", "score": 0.5, "location": {"latitude": 1.25}, "visits": "7"}`)
	cases := []struct {
		entry, want string
	}{
		{`"expected": {"name": "Cafe", "kind": "KIND_CAFE", "score": 0.5, "location": {"latitude": 1.25}, "visits": 7}`, ""},
		{`"expected": {"name": "Cafe", "kind": "KIND_PARK", "score": 0.5, "location": {"latitude": 1.25}, "visits": 7}`, "kind: want KIND_PARK, got KIND_CAFE"},
		{`"expected": {"name": "Cafe", "kind": "KIND_CAFE", "score": 0.5000001, "location": {"latitude": 1.25}, "visits": 7}`, ""},
		{`"expected": {"name": "Cafe", "kind": "KIND_CAFE", "score": 0.5, "location": {"latitude": 1.5}, "visits": 7}`, "location.latitude: want 1.5, got 1.25"},
		{`"expected": {"name": "Cafe"}`, "location.latitude: want 0, got 1.25"}, // whole: unset fields are their defaults
		{`"expected_fields": {"name": "Cafe", "location.latitude": 1.25}`, ""},
		{`"expected_fields": {"name": "Bar"}`, `name: want "Bar", got "Cafe"`},
		{`"expected_fields": {"location": {"latitude": 1.25}}`, ""},
		{`"expected_fields": {"visits": "8"}`, "visits: want 8, got 7"},
	}
	for _, tc := range cases {
		src := `{"data": [{"message": {}, ` + tc.entry + `}]}`
		reqs, err := readJSONInput("e.json", []byte(src), ms["Nearest"], types)
		if err != nil {
			t.Fatalf("%s: %v", tc.entry, err)
		}
		d := reqs[0].expect.check(place, [][]byte{got}, false, 0)
		if tc.want == "" && d != "" || tc.want != "" && !strings.Contains(d, tc.want) {
			t.Errorf("%s: %q, want %q", tc.entry, d, tc.want)
		}
	}

	// Streams: the whole list, one reply by index, or every reply.
	stream := [][]byte{reply(`{"name": "a"}`), reply(`{"name": "b"}`)}
	scases := []struct {
		entry, want string
	}{
		{`"expected": [{"name": "a"}, {"name": "b"}]`, ""},
		{`"expected": [{"name": "a"}]`, "want 1 replies, got 2"},
		{`"expected": [{"name": "a"}, {"name": "c"}]`, `[1].name: want "c", got "b"`},
		{`"expected_fields": {"[1].name": "b"}`, ""},
		{`"expected_fields": {"[2].name": "b"}`, "[2].name: the stream had 2 replies"},
		{`"expected_fields": {"name": "a"}`, `reply 1: name: want "a", got "b"`},
	}
	for _, tc := range scases {
		src := `{"data": [{"message": {}, ` + tc.entry + `}]}`
		reqs, err := readJSONInput("s.json", []byte(src), ms["Within"], types)
		if err != nil {
			t.Fatalf("%s: %v", tc.entry, err)
		}
		d := reqs[0].expect.check(place, stream, true, 0)
		if tc.want == "" && d != "" || tc.want != "" && !strings.Contains(d, tc.want) {
			t.Errorf("%s: %q, want %q", tc.entry, d, tc.want)
		}
	}
}

// expected_fields paths go through map fields by key, as TF Serving's
// outputs map needs (outputs.y.float_val was refused before): a field of
// an entry's message, the entry's whole value, a missing key, and keys
// that are not the map's key type.
func TestExpectedFieldsThroughMaps(t *testing.T) {
	ms, _ := places(t)
	md := ms["Nearest"].Input() // NearestRequest: map<string, Place> hints
	msg := dynamicpb.NewMessage(md)
	if err := protojson.Unmarshal([]byte(`{"hints": {"home": {"name": "Cafe", "score": 0.5, "location": {"latitude": 1.25}}}}`), msg); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, value, want string
	}{
		{"hints.home.name", `"Cafe"`, ""},
		{"hints.home.location.latitude", `1.25`, ""},
		{"hints.home.name", `"Bar"`, `hints.home.name: want "Bar", got "Cafe"`},
		{"hints.home", `{"name": "Cafe", "score": 0.5, "location": {"latitude": 1.25}}`, ""},
		{"hints.home", `{"name": "Cafe"}`, "location.latitude: want 0, got 1.25"},
		{"hints.work.name", `"Cafe"`, `the reply's hints has no key "work"`},
		{"hints", `{"home": {"name": "Cafe", "score": 0.5, "location": {"latitude": 1.25}}}`, ""},
	} {
		fc, err := parseFieldPath(tc.path, md, false)
		if err != nil {
			t.Errorf("%s: %v", tc.path, err)
			continue
		}
		wrapper := dynamicpb.NewMessage(fc.parent(md))
		if err := protojson.Unmarshal(fc.wrapExpected([]byte(tc.value)), wrapper); err != nil {
			t.Errorf("%s = %s: %v", tc.path, tc.value, err)
			continue
		}
		fc.setWant(wrapper)
		if d := fc.check(msg, 0); tc.want == "" && d != "" || tc.want != "" && !strings.Contains(d, tc.want) {
			t.Errorf("%s = %s: %q, want %q", tc.path, tc.value, d, tc.want)
		}
	}
	for _, tc := range []struct{ path, want string }{
		{"hints.home.nope", `no field "nope"`},
		{"hints.home.name.first", "name is not a message"},
	} {
		if _, err := parseFieldPath(tc.path, md, false); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.path, err, tc.want)
		}
	}
}
