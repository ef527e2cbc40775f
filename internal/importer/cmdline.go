package importer

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/perfscen/perfscen/runner/plan"
)

// commandLine recognises an echoed perf_analyzer invocation ("$ perf_analyzer
// -m x …", "root@host:/w# /opt/bin/perf_analyzer -m x …") and returns its
// arguments.
func commandLine(s string) ([]string, bool) {
	fields := strings.Fields(s)
	for i, f := range fields {
		if f != "perf_analyzer" && !strings.HasSuffix(f, "/perf_analyzer") {
			continue
		}
		// Prose that merely mentions perf_analyzer has no flags after it.
		args := fields[i+1:]
		for _, a := range args {
			if strings.HasPrefix(a, "-") {
				return args, true
			}
		}
		return nil, false
	}
	return nil, false
}

// flagSpec maps the perf_analyzer flags the importer reads to a setter.
type flagSpec struct {
	short, long string
	set         func(lp *logParser, v string) error
}

var flagSpecs = []flagSpec{
	{"m", "model-name", func(lp *logParser, v string) error { lp.model = v; return nil }},
	{"b", "batch-size", func(lp *logParser, v string) error {
		b, err := strconv.Atoi(v)
		if err != nil || b <= 0 {
			return fmt.Errorf("batch size %q is not a positive integer", v)
		}
		lp.batch = b
		return nil
	}},
	{"i", "protocol", func(lp *logParser, v string) error {
		p, err := plan.ParseProtocol(strings.ToLower(v))
		if err != nil {
			return err
		}
		lp.protocol = p
		return nil
	}},
	{"", "shared-memory", func(lp *logParser, v string) error { lp.shm = v; return nil }},
	{"", "service-kind", func(lp *logParser, v string) error {
		k, err := ParseServiceKind(v)
		lp.kind = k
		return err
	}},
	{"", "grpc-method", func(lp *logParser, v string) error { lp.method = v; return nil }},
}

// command applies the flags of one echoed command line; flags perfscen does
// not need are skipped.
func (lp *logParser) command(n int, args []string) error {
	for i := 0; i < len(args); i++ {
		a := args[i]
		for _, fs := range flagSpecs {
			v, ok, takesNext := flagValue(a, fs)
			if !ok {
				continue
			}
			if takesNext {
				if i+1 >= len(args) {
					return fmt.Errorf("%s:%d: perf_analyzer command line: %s needs a value", lp.name, n, a)
				}
				i++
				v = args[i]
			}
			if err := fs.set(lp, strings.Trim(v, `"'`)); err != nil {
				return fmt.Errorf("%s:%d: perf_analyzer command line: %w", lp.name, n, err)
			}
			break
		}
	}
	return nil
}

// flagValue matches a against -x V, -xV, --long V and --long=V forms.
func flagValue(a string, fs flagSpec) (v string, ok, takesNext bool) {
	if fs.long != "" {
		if a == "--"+fs.long {
			return "", true, true
		}
		if v, ok := strings.CutPrefix(a, "--"+fs.long+"="); ok {
			return v, true, false
		}
	}
	if fs.short != "" && strings.HasPrefix(a, "-"+fs.short) && !strings.HasPrefix(a, "--") {
		rest := a[1+len(fs.short):]
		if rest == "" {
			return "", true, true
		}
		return strings.TrimPrefix(rest, "="), true, false
	}
	return "", false, false
}
