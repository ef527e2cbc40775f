package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/perfscen/perfscen/internal/atomicfile"
	"github.com/perfscen/perfscen/internal/baseline"
	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/internal/history"
	"github.com/perfscen/perfscen/runner/result"
)

func newBaselineHistoryCmd(e *env) *cobra.Command {
	var metrics []string
	var all bool
	var resultsDir, htmlOut, mdOut string
	cmd := &cobra.Command{
		Use: "history FILE",
		Example: `  perfscen baseline history baselines/quickstart.json
  perfscen baseline history baselines/quickstart.json --results out --html history.html --markdown history.md`,
		Short: "Report a baseline's series over runs with the gate's band, failures and change points",
		Long: `Report, per testbed × point × metric, the series of a baseline's runs and of
the result files in --results (every *.json in the folder, of the same
scenario), in the order the runs started, whatever order they were
recorded in: when each run started, its run id, the perfscen version, the
value, whether its gate failed that point and metric, the baseline's band
(center ± MDE) and the change points found by E-divisive with means, each
marked worse or better, tested against autocorrelated noise so that a
drifting runner is not read as a change (docs/report.md, History). The metrics are those
'baseline show' lists unless --metric or --all says otherwise. Without
--html or --markdown the Markdown goes to standard output.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			want, err := shownMetrics(metrics, all)
			if err != nil {
				return err
			}
			f, err := baseline.Load(args[0])
			if err != nil {
				return exitcode.AsInvalid(err)
			}
			results, err := readResults(resultsDir)
			if err != nil {
				return exitcode.AsInvalid(err)
			}
			rep := history.Build(f, results, want)
			if htmlOut == "" && mdOut == "" {
				return history.Markdown(e.stdout, rep)
			}
			for _, out := range []struct {
				path  string
				write func(*bytes.Buffer) error
			}{
				{htmlOut, func(b *bytes.Buffer) error { return history.HTML(b, rep) }},
				{mdOut, func(b *bytes.Buffer) error { return history.Markdown(b, rep) }},
			} {
				if out.path == "" {
					continue
				}
				var b bytes.Buffer
				if err := out.write(&b); err != nil {
					return err
				}
				if err := atomicfile.Write(out.path, b.Bytes(), 0o644); err != nil {
					return exitcode.AsEnvironment(err)
				}
				fmt.Fprintf(e.stdout, "history written to %s\n", out.path)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&resultsDir, "results", "", "a folder of result files (perfscen run --out) to add to the baseline's runs")
	fl.StringVar(&htmlOut, "html", "", "write a self-contained HTML page with one chart per series")
	fl.StringVar(&mdOut, "markdown", "", "write the Markdown report here instead of standard output")
	fl.StringArrayVar(&metrics, "metric", nil, "report this metric (repeatable; default: as baseline show)")
	fl.BoolVar(&all, "all", false, "report every metric the history holds")
	return cmd
}

// readResults reads every *.json file of dir (none when dir is ""): a
// file that is not a result stops the report, naming it.
func readResults(dir string) (map[string]*result.Run, error) {
	out := map[string]*result.Run{}
	if dir == "" {
		return out, nil
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("--results: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("--results %s: not a folder", dir)
	}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || filepath.Ext(path) != ".json" {
			return nil
		}
		r, err := result.ReadFile(path)
		if err != nil {
			return err
		}
		out[path] = r
		return nil
	})
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("--results: %w", err)
		}
		return nil, err
	}
	return out, nil
}
