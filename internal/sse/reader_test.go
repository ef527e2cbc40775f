package sse

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

type ev struct{ Type, Data, ID string }

// readAll collects every event and the error that ended the stream.
func readAll(r io.Reader) ([]ev, error) {
	rd := NewReader(r)
	var out []ev
	for {
		e, err := rd.Next()
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return out, err
		}
		out = append(out, ev{string(e.Type), string(e.Data), string(e.ID)})
	}
}

func TestReader(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []ev
		wantErr error
	}{
		{name: "openai chunks and done",
			in:   "data: {\"a\":1}\n\ndata: {\"a\":2}\n\ndata: [DONE]\n\n",
			want: []ev{{"", `{"a":1}`, ""}, {"", `{"a":2}`, ""}, {"", "[DONE]", ""}}},
		{name: "crlf endings",
			in:   "data: x\r\n\r\ndata: y\r\n\r\n",
			want: []ev{{"", "x", ""}, {"", "y", ""}}},
		{name: "lone cr endings",
			in:   "data: x\r\rdata: y\r\r",
			want: []ev{{"", "x", ""}, {"", "y", ""}}},
		{name: "comments and keep-alives are skipped",
			in:   ": ping\n\n:\n\ndata: x\n: inside\n\n",
			want: []ev{{"", "x", ""}}},
		{name: "multi-line data joined with newline",
			in:   "data: first\ndata:second\ndata:  third\n\n",
			want: []ev{{"", "first\nsecond\n third", ""}}},
		{name: "event type and id",
			in:   "event: error\nid: 7\ndata: {\"error\":{}}\n\ndata: next\n\n",
			want: []ev{{"error", `{"error":{}}`, "7"}, {"", "next", "7"}}},
		{name: "event without data is not dispatched",
			in:   "event: ping\n\ndata: x\n\n",
			want: []ev{{"", "x", ""}}},
		{name: "field without colon",
			in:   "data\n\n",
			want: []ev{{"", "", ""}}},
		{name: "empty data field still dispatches",
			in:   "data:\n\n",
			want: []ev{{"", "", ""}}},
		{name: "unknown fields and retry ignored",
			in:   "retry: 10\nfoo: bar\ndata: x\n\n",
			want: []ev{{"", "x", ""}}},
		{name: "bom stripped",
			in:   "\ufeffdata: x\n\n",
			want: []ev{{"", "x", ""}}},
		{name: "truncated inside event",
			in:      "data: x\n\ndata: y\n",
			want:    []ev{{"", "x", ""}},
			wantErr: ErrTruncated},
		{name: "truncated mid line",
			in:      "data: x\n\ndata: {\"cho",
			want:    []ev{{"", "x", ""}},
			wantErr: ErrTruncated},
		{name: "trailing keep-alive is not truncation",
			in:   "data: x\n\n: ping\n",
			want: []ev{{"", "x", ""}}},
		{name: "empty stream", in: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, chunked := range []bool{false, true} {
				var r io.Reader = strings.NewReader(tc.in)
				if chunked {
					r = iotest.OneByteReader(r)
				}
				got, err := readAll(r)
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("chunked=%v: err = %v, want %v", chunked, err, tc.wantErr)
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("chunked=%v: events (-want +got):\n%s", chunked, diff)
				}
			}
		})
	}
}

func TestReaderLineLimit(t *testing.T) {
	rd := NewReader(strings.NewReader("data: " + strings.Repeat("x", 100) + "\n\n"))
	rd.SetMaxLine(32)
	if _, err := rd.Next(); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("err = %v, want ErrLineTooLong", err)
	}
}

func TestReaderReadError(t *testing.T) {
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("data: x\n\ndata: y"), iotest.ErrReader(boom))
	got, err := readAll(r)
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want %v", err, boom)
	}
	if diff := cmp.Diff([]ev{{"", "x", ""}}, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestReaderReset(t *testing.T) {
	rd := NewReader(strings.NewReader("event: a\ndata: partial"))
	if _, err := rd.Next(); !errors.Is(err, ErrTruncated) {
		t.Fatalf("err = %v", err)
	}
	rd.Reset(strings.NewReader("data: fresh\n\n"))
	e, err := rd.Next()
	if err != nil || string(e.Data) != "fresh" || len(e.Type) != 0 {
		t.Fatalf("after reset: %q %q %v", e.Type, e.Data, err)
	}
}
