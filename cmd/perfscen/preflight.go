package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/runner/result"
	"github.com/perfscen/perfscen/scenario"
)

// checkOutputs makes sure every output the run will write can be written,
// before any load: a read-only --out-dir or --junit path must not be found
// only after minutes of measurement.
func checkOutputs(f reportFlags) error {
	dirs := []struct{ flag, path string }{}
	if f.out == "" && f.outDir != "" {
		dirs = append(dirs, struct{ flag, path string }{"--out-dir", f.outDir})
	}
	for _, o := range []struct{ flag, path string }{
		{"--out", f.out}, {"--junit", f.junit}, {"--html", f.html}, {"--csv", f.csv}, {"--markdown", f.markdown},
	} {
		if o.path == "" {
			continue
		}
		if st, err := os.Stat(o.path); err == nil && st.IsDir() {
			return exitcode.AsInvalid(fmt.Errorf("%s %s: is a directory; give a file path", o.flag, o.path))
		}
		dirs = append(dirs, struct{ flag, path string }{o.flag, filepath.Dir(o.path)})
	}
	for _, d := range dirs {
		if err := writableDir(d.path); err != nil {
			return exitcode.AsInvalid(fmt.Errorf("%s: %w", d.flag, err))
		}
	}
	return nil
}

// writableDir proves dir can be written, or created and written, by
// creating a file in it or in its nearest existing ancestor; it leaves
// nothing behind (no directory is created before the run).
func writableDir(dir string) error {
	at := dir
	for {
		st, err := os.Stat(at)
		if err == nil {
			if !st.IsDir() {
				return fmt.Errorf("cannot create %s: %s is not a directory", dir, at)
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("cannot write in %s: %w", dir, err)
		}
		parent := filepath.Dir(at)
		if parent == at {
			return fmt.Errorf("cannot write in %s: %w", dir, err)
		}
		at = parent
	}
	tmp, err := os.CreateTemp(at, ".perfscen-write-check-*")
	if err != nil {
		return fmt.Errorf("cannot write in %s: %w", dir, errors.Unwrap(err))
	}
	name := tmp.Name()
	tmp.Close()
	return os.Remove(name)
}

// duplicateNames refuses two scenario files with one name: their result
// JSON and reports would overwrite each other. Files that do not load are
// left to their own error.
func duplicateNames(files []string, getenv func(string) string) error {
	seen := map[string]string{}
	for _, f := range files {
		pl, err := scenario.LoadPlan(f, getenv)
		if err != nil {
			continue
		}
		if prev, dup := seen[pl.Scenario]; dup {
			return exitcode.AsInvalid(fmt.Errorf("%s and %s are both named %q; scenario names must be distinct (their outputs would overwrite each other)", prev, f, pl.Scenario))
		}
		seen[pl.Scenario] = f
	}
	return nil
}

// csvDims are the swept dimensions besides the load, which perf_analyzer's
// CSV layout has no column for.
var csvDims = []string{"batch_size", "protocol", "shared_memory", "shape_set", "input_tokens", "output_tokens"}

// csvGroupKeys names, per point, the set of points perf_analyzer's CSV
// layout can hold together: one model at one value of every dimension
// other than the load that varies in the run (batch size, protocol, shared
// memory, shape set, input and output tokens).
func csvGroupKeys(points []result.Point) []string {
	varies := map[string]bool{}
	for _, dim := range csvDims {
		seen := map[string]bool{}
		for _, p := range points {
			seen[p.Coords[dim]] = true
		}
		varies[dim] = len(seen) > 1
	}
	keys := make([]string, len(points))
	for i, p := range points {
		// A server/model alias must not become a directory in the name.
		k := strings.ReplaceAll(p.Model, "/", ".")
		for _, dim := range csvDims {
			if varies[dim] {
				k += "." + dim + "=" + p.Coords[dim]
			}
		}
		keys[i] = k
	}
	return keys
}
