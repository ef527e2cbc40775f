package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/internal/report"
	"github.com/perfscen/perfscen/runner/plan"
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
	modes := map[string]bool{}
	for _, p := range points {
		modes[string(p.Mode)] = true
	}
	keys := make([]string, len(points))
	for i, p := range points {
		// A server/model alias must not become a directory in the name.
		k := strings.ReplaceAll(p.Model, "/", ".")
		if len(modes) > 1 {
			// One file holds one load mode: its first column is either
			// the concurrency or the request rate.
			k += ".mode=" + string(p.Mode)
		}
		for _, dim := range csvDims {
			if varies[dim] {
				k += "." + dim + "=" + p.Coords[dim]
			}
		}
		keys[i] = k
	}
	return keys
}

// checkStdoutFormat refuses, before any load, a report on stdout that the
// run could not write afterwards: an unknown format, or perf_analyzer's
// CSV for a plan whose points need several files (several models, or a
// swept dimension its layout has no column for).
func checkStdoutFormat(format string, pl *plan.Plan) error {
	if _, err := report.Lookup(format); err != nil {
		return exitcode.AsInvalid(fmt.Errorf("--format: %w", err))
	}
	if format != "csv" {
		return nil
	}
	pts := make([]result.Point, len(pl.Points))
	for i, p := range pl.Points {
		pts[i] = result.Point{Model: p.Model, Mode: p.Load.Mode, Coords: p.Coords}
	}
	groups := map[string]bool{}
	for _, k := range csvGroupKeys(pts) {
		groups[k] = true
	}
	if len(groups) > 1 {
		names := make([]string, 0, len(groups))
		for k := range groups {
			names = append(names, k)
		}
		sort.Strings(names)
		return exitcode.AsInvalid(fmt.Errorf("--format csv: perf_analyzer's layout holds one model at one load mode and one value of each swept dimension, and %s needs %d files (%s); write them with --csv PATH",
			pl.Scenario, len(groups), strings.Join(names, ", ")))
	}
	return nil
}
