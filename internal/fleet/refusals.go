package fleet

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds of what the coordinator keeps and says of peers it refused: a
// refusal's text comes partly from the peer (a name, an address, a TLS
// library's words about its certificate), and anyone who can reach the
// port can knock as often as it likes.
const (
	// maxRefusalKeys is how many distinct refusals (who and why) a ledger
	// names; refusals past it are counted together.
	maxRefusalKeys = 16
	// maxRefusalText bounds one refusal's who and its reason, in bytes:
	// room for a coordinator's own words (its data files, its --set
	// flags) beside what is quoted from the peer.
	maxRefusalText = 1 << 10
	// maxPeerText bounds a single value quoted from a peer (a name, a
	// version, a host) inside a message.
	maxPeerText = 128
)

// refusal is one distinct refusal and how often it happened.
type refusal struct {
	who, reason string
	count       int64
}

// ledger counts refusals by who was refused and why. It keeps at most
// maxRefusalKeys of them, each at most 2×maxRefusalText bytes, so a flood
// of knocks costs a counter, not memory; and it says which refusals to
// log: the first of each, then the 2nd, 4th, 8th… (so every refusal is
// accounted for in the counts while the log grows with the logarithm of
// the knocks).
type ledger struct {
	byKey map[string]*refusal
	order []*refusal
	// others counts refusals past maxRefusalKeys distinct ones; last is
	// the latest of them.
	others int64
	last   string
	total  int64
}

// add counts a refusal and returns the line to log, "" for none.
func (l *ledger) add(who, reason string) string {
	who, reason = clean(who, maxRefusalText), clean(reason, maxRefusalText)
	l.total++
	key := who + "\x00" + reason
	if r, ok := l.byKey[key]; ok {
		r.count++
		if !powerOfTwo(r.count) {
			return ""
		}
		return fmt.Sprintf("refused %s: %s (%d times so far)", who, reason, r.count)
	}
	if len(l.order) >= maxRefusalKeys {
		l.others++
		l.last = who + ": " + reason
		if !powerOfTwo(l.others) {
			return ""
		}
		return fmt.Sprintf("refused %d more time(s), not named (more than %d distinct refusals; the latest: %s)", l.others, maxRefusalKeys, l.last)
	}
	if l.byKey == nil {
		l.byKey = map[string]*refusal{}
	}
	r := &refusal{who: who, reason: reason, count: 1}
	l.byKey[key] = r
	l.order = append(l.order, r)
	return fmt.Sprintf("refused %s: %s", who, reason)
}

// entries are the refusals for a message or the result's notes, in the
// order first seen, with their counts.
func (l *ledger) entries() []string {
	var out []string
	for _, r := range l.order {
		e := r.who + ": " + r.reason
		if r.count > 1 {
			e += fmt.Sprintf(" (%d times)", r.count)
		}
		out = append(out, e)
	}
	if l.others > 0 {
		out = append(out, fmt.Sprintf("%d more refusal(s) not named (more than %d distinct; the latest: %s)", l.others, maxRefusalKeys, l.last))
	}
	return out
}

func powerOfTwo(n int64) bool { return n > 0 && n&(n-1) == 0 }

// clean makes s fit for one line of a log, a message or a note: at most
// n bytes (then "…"), every rune that is not graphic — a newline or a
// line separator that would forge a log line, a terminal escape, a
// bidirectional override — and every invalid byte written as a Go
// escape (\n, \x1b, \u202e). Graphic text (spaces, quotes and
// backslashes included) is left alone, so text already quoted with %q
// passes unchanged.
func clean(s string, n int) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		piece := s[i : i+size]
		switch {
		case r == utf8.RuneError && size == 1:
			piece = fmt.Sprintf(`\x%02x`, s[i])
		case !unicode.IsGraphic(r):
			q := strconv.QuoteRuneToASCII(r)
			piece = q[1 : len(q)-1]
		}
		if b.Len()+len(piece) > n {
			b.WriteString("…")
			break
		}
		b.WriteString(piece)
		i += size
	}
	return b.String()
}

// clip cuts s to at most n bytes on a rune boundary, for text whose
// length alone matters (what an agent reports travels within
// maxAgentMessage).
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
