package scenario

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Error is one problem in a scenario file, located at the YAML node it is
// about.
type Error struct {
	File string
	Line int // 1-based; 0 when the problem has no position (e.g. unreadable file)
	Col  int
	Path string // field path, e.g. models[1].batch_size; empty for the document
	Msg  string
	// Set, for a problem with a --set override, is the override's path:
	// the message names the flag instead of a place in the file.
	Set string
}

func (e Error) Error() string {
	var b strings.Builder
	if e.Set != "" {
		b.WriteString("--set " + e.Set + ": ")
		if e.Path != "" && e.Path != e.Set {
			b.WriteString(e.Path + ": ")
		}
		b.WriteString(e.Msg)
		return b.String()
	}
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Col > 0 {
			fmt.Fprintf(&b, ":%d", e.Col)
		}
	}
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors are all problems found in one file, sorted by position. The CLI
// prints one per line and exits 2.
type Errors struct {
	List []Error
}

func (e *Errors) Error() string {
	lines := make([]string, len(e.List))
	for i, x := range e.List {
		lines[i] = x.Error()
	}
	return strings.Join(lines, "\n")
}

func (e *Errors) sort() {
	sort.SliceStable(e.List, func(i, j int) bool {
		a, b := e.List[i], e.List[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Col != b.Col {
			return a.Col < b.Col
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Msg < b.Msg
	})
	// Drop exact duplicates: several schema branches can say the same thing.
	out := e.List[:0]
	for i, x := range e.List {
		if i > 0 && x == e.List[i-1] {
			continue
		}
		out = append(out, x)
	}
	e.List = out
}

// path is a field path: string keys and int indexes.
type path []any

func (p path) String() string {
	var b strings.Builder
	for _, s := range p {
		switch s := s.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", s)
		case string:
			if identRE.MatchString(s) {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(s)
			} else {
				fmt.Fprintf(&b, "[%s]", strconv.Quote(s))
			}
		}
	}
	return b.String()
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// child returns a copy of p extended by segs (never aliasing p's array).
func (p path) child(segs ...any) path {
	out := make(path, 0, len(p)+len(segs))
	return append(append(out, p...), segs...)
}

// collector gathers errors located through the document tree.
type collector struct {
	file string
	root *yaml.Node
	errs []Error
	// set are the --set overrides laid over the document.
	set []string
}

// at records msg about the value at p (or the deepest existing ancestor).
func (c *collector) at(p path, format string, args ...any) {
	n := c.lookup(p, false)
	c.add(n, p, fmt.Sprintf(format, args...))
}

// atKey records msg about the key of the mapping entry at p.
func (c *collector) atKey(p path, format string, args ...any) {
	n := c.lookup(p, true)
	c.add(n, p, fmt.Sprintf(format, args...))
}

func (c *collector) add(n *yaml.Node, p path, msg string) {
	e := Error{File: c.file, Path: p.String(), Msg: msg}
	if n != nil {
		e.Line, e.Col = n.Line, n.Column
	}
	if e.Line < 0 {
		// A node an override brought: the error names the flag.
		if i := -e.Line - 1; i < len(c.set) {
			at, _, _ := strings.Cut(c.set[i], "=")
			e.Set = strings.TrimSpace(at)
		}
		e.Line, e.Col = 0, 0
	}
	c.errs = append(c.errs, e)
}

// where is "file:line:col: field" of the value at p, the prefix an error
// about it would carry: later stages (a kind reading an input file the
// scenario names) report at the scenario's line without reading it again.
func (c *collector) where(p path) string {
	e := Error{File: c.file, Path: p.String()}
	if n := c.lookup(p, false); n != nil && n.Line > 0 {
		e.Line, e.Col = n.Line, n.Column
	}
	return strings.TrimSuffix(e.Error(), ": ")
}

// whereKey is where for the key of the mapping entry at p.
func (c *collector) whereKey(p path) string {
	e := Error{File: c.file, Path: p.String()}
	if n := c.lookup(p, true); n != nil {
		e.Line, e.Col = n.Line, n.Column
	}
	return strings.TrimSuffix(e.Error(), ": ")
}

// hasKey says whether the document's top-level mapping has key.
func (c *collector) hasKey(key string) bool {
	n := deref(c.root)
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = deref(n.Content[0])
	}
	if n == nil || n.Kind != yaml.MappingNode {
		return false
	}
	for j := 0; j+1 < len(n.Content); j += 2 {
		if n.Content[j].Value == key {
			return true
		}
	}
	return false
}

// lookup walks p from the document root; a missing segment stops the walk
// at the closest existing node so the position still points nearby.
func (c *collector) lookup(p path, key bool) *yaml.Node {
	n := deref(c.root)
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = deref(n.Content[0])
	}
	for i, seg := range p {
		if n == nil {
			return nil
		}
		last := i == len(p)-1
		switch seg := seg.(type) {
		case string:
			if n.Kind != yaml.MappingNode {
				return n
			}
			found := false
			for j := 0; j+1 < len(n.Content); j += 2 {
				if n.Content[j].Value == seg {
					if last && key {
						return n.Content[j]
					}
					n, found = deref(n.Content[j+1]), true
					break
				}
			}
			if !found {
				return n
			}
		case int:
			if n.Kind != yaml.SequenceNode || seg >= len(n.Content) {
				return n
			}
			n = deref(n.Content[seg])
		}
	}
	return n
}

// suggest returns " (did you mean `x`?)" for the closest candidate within
// a small edit distance, or "".
func suggest(word string, candidates []string) string {
	best, bestD := "", 0
	for _, c := range candidates {
		d := editDistance(strings.ToLower(word), strings.ToLower(c))
		if best == "" || d < bestD || (d == bestD && c < best) {
			best, bestD = c, d
		}
	}
	limit := 2
	if len(word) > 8 {
		limit = 3
	}
	if best == "" || bestD > limit || bestD >= len(word) {
		return ""
	}
	return fmt.Sprintf(" (did you mean `%s`?)", best)
}

// editDistance is the Levenshtein distance over runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
