package main

import (
	"fmt"
	"io"

	"github.com/olekukonko/tablewriter"
	"github.com/spf13/cobra"

	"github.com/perfscen/perfscen/internal/baseline"
	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/internal/numfmt"
	"github.com/perfscen/perfscen/internal/verdict"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

func init() { register(newCompareCmd) }

func newCompareCmd(e *env) *cobra.Command {
	var o verdict.CompareOptions
	cmd := &cobra.Command{
		Use: "compare OLD.json NEW.json",
		Example: `  perfscen compare out/before.json out/after.json
  perfscen import --model resnet50 -o old.json pa_old.csv && perfscen import --model resnet50 -o new.json pa_new.csv && perfscen compare old.json new.json`,
		Short: "Compare two result files point by point (exit 1 on a regression)",
		Long: `compare prints every point × metric of two result files (from perfscen run
or perfscen import) with old and new medians, the change, its bootstrap 95%
interval and a two-sided Mann–Whitney p-value. A change counts when p < alpha
and it exceeds --min-change; with fewer than 4 trials on a side (imported
summaries) no test is possible, the interval and p read n/a and a change
counts when it exceeds --tolerance. "~" means no significant change.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			old, err := result.ReadFile(args[0])
			if err != nil {
				return exitcode.AsInvalid(err)
			}
			cur, err := result.ReadFile(args[1])
			if err != nil {
				return exitcode.AsInvalid(err)
			}
			ds := verdict.CompareRuns(old, cur, o)
			if err := renderDeltas(e.stdout, ds); err != nil {
				return err
			}
			if verdict.Regressed(ds) {
				return exitSilently(exitcode.CheckFailed)
			}
			return nil
		},
	}
	cmd.Flags().Float64Var(&o.Alpha, "alpha", plan.DefaultAlpha, "significance level of the two-sided U test")
	cmd.Flags().Float64Var(&o.MinChange, "min-change", 0.02, "smallest relative change reported when a test is possible")
	cmd.Flags().Float64Var(&o.Tolerance, "tolerance", 0.05, "relative change that counts when no test is possible")
	return cmd
}

// renderDeltas writes the benchstat-like table.
func renderDeltas(w io.Writer, ds []verdict.Delta) error {
	t := tablewriter.NewWriter(w)
	t.Header("point", "metric", "old", "new", "delta", "interval", "p", "n", "verdict")
	for _, d := range ds {
		var row []any
		switch d.Verdict {
		case "new", "missing":
			row = []any{d.Point, "", "", "", "", "", "", "", d.Verdict}
		default:
			delta := "~"
			if d.Verdict != "~" {
				delta = fmt.Sprintf("%+.1f%%", 100*d.Change)
			}
			interval, p := "n/a", "n/a"
			if d.HasStats {
				interval = fmt.Sprintf("[%+.1f%%, %+.1f%%]", 100*d.Lo, 100*d.Hi)
				p = numfmt.P(d.P)
			}
			v := d.Verdict
			if v == "regressed" {
				v = "REGRESSED"
			}
			row = []any{d.Point, d.Metric, baseline.FormatValue(d.Metric, d.Old), baseline.FormatValue(d.Metric, d.New),
				delta, interval, p, fmt.Sprintf("%d+%d", d.NOld, d.NNew), v}
		}
		if err := t.Append(row...); err != nil {
			return err
		}
	}
	return t.Render()
}
