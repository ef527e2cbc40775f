package report

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"golang.org/x/term"

	"github.com/perfscen/perfscen/internal/verdict"
	"github.com/perfscen/perfscen/runner/result"
)

// Renderer writes one output format. v may be nil (results only); no
// renderer computes statistics: every figure shown is in run or v.
type Renderer func(w io.Writer, run *result.Run, v *verdict.Verdict, opts Options) error

// Options tune renderers; each reads only the fields it needs.
type Options struct {
	// Color enables ANSI colours in console output; see ColorFor.
	Color bool
	// VerboseCSV selects perf_analyzer's --verbose-csv column set.
	VerboseCSV bool
	// Model picks the model whose points the CSV holds; perf_analyzer's
	// layout has no model column, so a multi-model run needs one.
	Model string
	// Percentile is the latency metric plotted against throughput (a
	// result metric name such as "p95"); "" means p95.
	Percentile string
}

// renderers is the one registry of output formats.
var renderers = map[string]Renderer{
	"console":  Console,
	"csv":      CSV,
	"json":     JSON,
	"junit":    JUnit,
	"markdown": Markdown,
	"github":   GitHub,
	"html":     HTML,
}

// Formats lists the registered format names, sorted.
func Formats() []string {
	names := make([]string, 0, len(renderers))
	for n := range renderers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Lookup returns the renderer registered under name.
func Lookup(name string) (Renderer, error) {
	r, ok := renderers[name]
	if !ok {
		return nil, fmt.Errorf("unknown report format %q (known: %s)", name, strings.Join(Formats(), ", "))
	}
	return r, nil
}

// Render writes run and v to w in the named format.
func Render(w io.Writer, format string, run *result.Run, v *verdict.Verdict, opts Options) error {
	r, err := Lookup(format)
	if err != nil {
		return err
	}
	if run == nil {
		return fmt.Errorf("rendering %s: no results", format)
	}
	return r(w, run, v, opts)
}

// ColorFor reports whether w is a terminal that should get colours:
// never for files and pipes, and not when NO_COLOR is set.
func ColorFor(w io.Writer, getenv func(string) string) bool {
	f, ok := w.(*os.File)
	if !ok || getenv("NO_COLOR") != "" || getenv("TERM") == "dumb" {
		return false
	}
	return term.IsTerminal(int(f.Fd()))
}
