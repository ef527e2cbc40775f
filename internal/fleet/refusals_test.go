package fleet

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/perfscen/perfscen/internal/engine"
	"github.com/perfscen/perfscen/internal/fleet/fleetpb"
	"github.com/perfscen/perfscen/runner/result"
)

func TestClean(t *testing.T) {
	cases := []struct {
		in   string
		n    int
		want string
	}{
		{"agent-7", 64, "agent-7"},
		{`"quoted" \ kept`, 64, `"quoted" \ kept`},
		{"a\nperfscen: forged", 64, `a\nperfscen: forged`},
		{"\x1b[2Kred\r", 64, `\x1b[2Kred\r`},
		{"bidi \u202eevil", 64, `bidi \u202eevil`},
		{"bad \xff byte", 64, `bad \xff byte`},
		{"ünïcode ok", 64, "ünïcode ok"},
		{"no-break\u00a0space", 64, "no-break\u00a0space"},
		{"line\u2028separator", 64, `line\u2028separator`},
		{"abcdef", 4, "abcd…"},
		{"ab\ncd", 3, "ab…"}, // an escape is not cut in half
		{"aé", 2, "a…"},      // nor a rune
	}
	for _, tc := range cases {
		if got := clean(tc.in, tc.n); got != tc.want {
			t.Errorf("clean(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

// clean's promise, for any input: one line of graphic, valid UTF-8, at
// most n bytes and an ellipsis, and the input itself when it was short
// and graphic already.
func FuzzClean(f *testing.F) {
	for _, s := range []string{"", "agent-7", "a\nb", "\x1b[31m", "\u202e", "\xff\xfe", strings.Repeat("é", 100), `%q "\"`} {
		f.Add(s, 16)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		n = max(0, n%1024)
		got := clean(s, n)
		if !utf8.ValidString(got) || len(got) > n+len("…") {
			t.Fatalf("clean(%q, %d) = %q: invalid or too long", s, n, got)
		}
		for _, r := range got {
			if !unicode.IsGraphic(r) {
				t.Fatalf("clean(%q, %d) = %q holds %U", s, n, got, r)
			}
		}
		graphic := utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsGraphic(r) }) < 0
		if graphic && len(s) <= n && got != s {
			t.Fatalf("clean(%q, %d) = %q: changed graphic text", s, n, got)
		}
	})
}

// The ledger counts every refusal, keeps maxRefusalKeys distinct ones
// and says to log the 1st, 2nd, 4th, 8th… of each.
func TestLedger(t *testing.T) {
	var l ledger
	var logged []string
	for i := range 1000 {
		// 40 hosts knock, each 25 times; the host name is the peer's.
		who := fmt.Sprintf("an agent from 10.0.0.%d\n%s", i%40, strings.Repeat("x", 4096))
		if line := l.add(who, "wrong token"); line != "" {
			logged = append(logged, line)
		}
	}
	if l.total != 1000 || len(l.order) != maxRefusalKeys || l.others != 1000-maxRefusalKeys*25 {
		t.Errorf("total %d, kept %d, others %d", l.total, len(l.order), l.others)
	}
	// Per host kept: 1st, 2nd, 4th, 8th and 16th knock; the others: at
	// their 1st, 2nd, 4th … 512th.
	if want := maxRefusalKeys*5 + 10; len(logged) != want {
		t.Errorf("%d lines logged, want %d", len(logged), want)
	}
	entries := l.entries()
	size := 0
	for _, e := range append(entries, logged...) {
		size += len(e)
		if strings.Contains(e, "\n") || len(e) > 2*maxRefusalText+200 {
			t.Fatalf("entry of %d bytes: %.200q", len(e), e)
		}
	}
	if len(entries) != maxRefusalKeys+1 || !strings.HasSuffix(entries[0], "wrong token (25 times)") ||
		!strings.HasPrefix(entries[maxRefusalKeys], "600 more refusal(s) not named") {
		t.Errorf("entries:\n%s", strings.Join(entries, "\n"))
	}
	if size > 128<<10 {
		t.Errorf("%d bytes kept and logged", size)
	}
}

// An agent's largest messages fit in maxAgentMessage: a window whose
// histogram has every bucket counted, and every error class, error and
// mismatch at the longest a server could make them.
func TestWorstCaseReportFits(t *testing.T) {
	h := hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
	snap := h.Export()
	// As large as counts can be and still sum to an int64 (the
	// encoding's varints are then their longest), and random, so zlib
	// finds nothing to compress.
	per := uint64(1<<63-1) / uint64(len(snap.Counts))
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range snap.Counts {
		snap.Counts[i] = int64(per/2 + rng.Uint64N(per/2))
	}
	hist, err := hdrhistogram.Import(snap).Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("é", 1<<20)
	var classes []result.ErrorClass
	var tallies []engine.Tally
	for i := range 64 {
		classes = append(classes, result.ErrorClass{Class: fmt.Sprint(i) + long, Count: 1 << 62, Example: long})
	}
	for range 5 {
		tallies = append(tallies, engine.Tally{Message: long, Count: 1 << 62})
	}
	window := &fleetpb.AgentMessage{Body: &fleetpb.AgentMessage_Window{Window: reportOf(1<<63, engine.WindowReport{
		Index: 1 << 30, Requests: 1 << 62, Histogram: hist, Classes: classes})}}
	done := &fleetpb.AgentMessage{Body: &fleetpb.AgentMessage_Done{Done: doneOf(1<<63, engine.Totals{
		Errors: tallies, Mismatches: tallies, Classes: classes, Err: long})}}
	for _, m := range []*fleetpb.AgentMessage{window, done} {
		if size := proto.Size(m); size > maxAgentMessage*6/10 {
			t.Errorf("%T: %d bytes, maxAgentMessage %d", m.Body, size, maxAgentMessage)
		}
	}
	if testing.Verbose() {
		t.Logf("histogram %d bytes, window %d, done %d", len(hist), proto.Size(window), proto.Size(done))
	}
	if len(hist) < 150<<10 {
		t.Errorf("the histogram of every bucket counted is only %d bytes: not the worst case", len(hist))
	}
}

// An agent whose process was killed ends its stream as grpc-go's
// Canceled, which read as the coordinator cancelling it ("rpc error: code
// = Canceled desc = context canceled"); the reason now says the agent's
// connection closed. Other errors keep their words.
func TestLostReason(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{status.Error(codes.Canceled, "context canceled"), "its connection closed (the agent process ended or was killed"},
		{context.Canceled, "its connection closed"},
		{status.Error(codes.Unavailable, "transport is closing"), "transport is closing"},
		{errors.New("no message for 3s (heartbeat 1s)"), "no message for 3s"},
	} {
		if got := lostReason(tc.err).Error(); !strings.Contains(got, tc.want) || strings.Contains(got, "context canceled") {
			t.Errorf("lostReason(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
