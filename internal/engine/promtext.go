package engine

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// promSample is one line of the Prometheus text exposition format.
type promSample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// parseProm reads the text exposition format, keeping only metrics for
// which keep returns true (nil keeps all). It understands what Triton
// writes: comments, optional labels with escaped values, a value and an
// optional timestamp.
func parseProm(r io.Reader, keep func(name string) bool) ([]promSample, error) {
	var out []promSample
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || s[0] == '#' {
			continue
		}
		end := strings.IndexAny(s, "{ \t")
		if end <= 0 {
			return nil, fmt.Errorf("metrics line %d: no value after metric name", line)
		}
		name, rest := s[:end], s[end:]
		if keep != nil && !keep(name) {
			continue
		}
		smp := promSample{Name: name}
		if rest[0] == '{' {
			labels, after, err := parseLabels(rest[1:])
			if err != nil {
				return nil, fmt.Errorf("metrics line %d: %w", line, err)
			}
			smp.Labels, rest = labels, after
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 || len(fields) > 2 {
			return nil, fmt.Errorf("metrics line %d: want a value and an optional timestamp, got %q", line, rest)
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return nil, fmt.Errorf("metrics line %d: value %q: %w", line, fields[0], err)
		}
		smp.Value = v
		out = append(out, smp)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading metrics: %w", err)
	}
	return out, nil
}

// parseLabels reads `a="x",b="y"}` and returns the labels and what follows
// the closing brace.
func parseLabels(s string) (map[string]string, string, error) {
	labels := map[string]string{}
	for {
		s = strings.TrimLeft(s, " \t")
		if strings.HasPrefix(s, "}") {
			return labels, s[1:], nil
		}
		eq := strings.IndexByte(s, '=')
		if eq <= 0 {
			return nil, "", fmt.Errorf("label without '=' in %q", s)
		}
		key := strings.TrimSpace(s[:eq])
		s = strings.TrimLeft(s[eq+1:], " \t")
		if !strings.HasPrefix(s, `"`) {
			return nil, "", fmt.Errorf("label %s: value is not quoted", key)
		}
		var val strings.Builder
		i := 1
		for ; i < len(s) && s[i] != '"'; i++ {
			if s[i] == '\\' && i+1 < len(s) {
				i++
				switch s[i] {
				case 'n':
					val.WriteByte('\n')
				default:
					val.WriteByte(s[i])
				}
				continue
			}
			val.WriteByte(s[i])
		}
		if i >= len(s) {
			return nil, "", fmt.Errorf("label %s: unterminated value", key)
		}
		labels[key] = val.String()
		s = strings.TrimLeft(s[i+1:], " \t")
		if strings.HasPrefix(s, ",") {
			s = s[1:]
		} else if !strings.HasPrefix(s, "}") {
			return nil, "", fmt.Errorf("label %s: want ',' or '}' after the value", key)
		}
	}
}
