package sse

import (
	"io"
	"regexp"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

var lineEnd = regexp.MustCompile("\r\n|\r|\n")

// reference parses the way the standard's prose reads, on a whole string:
// slow and obvious, to hold the streaming reader to it.
func reference(in string) (events []ev, truncated bool) {
	in = strings.TrimPrefix(in, "\ufeff")
	lines := lineEnd.Split(in, -1)
	last := lines[len(lines)-1] // after the final line ending: incomplete
	lines = lines[:len(lines)-1]
	var data, typ, id string
	hasData, pending := false, false
	for _, l := range lines {
		if l == "" {
			if hasData {
				events = append(events, ev{typ, data, id})
			}
			data, typ, hasData, pending = "", "", false, false
			continue
		}
		if l[0] == ':' {
			continue
		}
		pending = true
		name, value, _ := strings.Cut(l, ":")
		value = strings.TrimPrefix(value, " ")
		switch name {
		case "data":
			if hasData {
				data += "\n"
			}
			data += value
			hasData = true
		case "event":
			typ = value
		case "id":
			if !strings.Contains(value, "\x00") {
				id = value
			}
		}
	}
	return events, pending || (last != "" && last[0] != ':')
}

func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"data: {\"a\":1}\n\ndata: [DONE]\n\n",
		"data: x\r\n\r\n", "data: x\r\rdata: y\r\r", ": ping\n\n", "event: error\ndata: {}\n\n",
		"data: a\ndata: b\n\n", "\ufeffdata: x\n\n", "data: x", "id: 1\x00\ndata: y\n\n", "\r\n\r",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		want, truncated := reference(in)
		for _, r := range []io.Reader{strings.NewReader(in), iotest.OneByteReader(strings.NewReader(in)),
			iotest.HalfReader(strings.NewReader(in))} {
			got, err := readAll(r)
			if (err == ErrTruncated) != truncated || (err != nil && err != ErrTruncated) {
				t.Fatalf("err = %v, reference truncated = %v", err, truncated)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("events differ from the reference (-want +got):\n%s", diff)
			}
		}
	})
}
