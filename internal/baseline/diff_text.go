package baseline

import (
	"fmt"
	"strings"
	"time"

	"github.com/perfscen/perfscen/internal/numfmt"
)

// String renders the diff as the lines printed before an update is
// written.
func (d *Diff) String() string {
	var b strings.Builder
	switch {
	case d.NewFile:
		fmt.Fprintf(&b, "new baseline for scenario %s\n", d.Scenario)
	case d.NewTestbed:
		fmt.Fprintf(&b, "scenario %s: new testbed %s\n", d.Scenario, d.Testbed)
	}
	switch {
	case d.MigratedFrom != "" && d.PreIdentity:
		fmt.Fprintf(&b, "testbed %s: history moved from testbed %s (recorded before the CPU's family, model and caches were part of the id; same CPU name, cores, memory and server)\n", d.Testbed, d.MigratedFrom)
	case d.MigratedFrom != "":
		fmt.Fprintf(&b, "testbed %s: history moved from legacy testbed %s (same hardware and server; its id hashed the hostname)\n", d.Testbed, d.MigratedFrom)
	}
	fmt.Fprintf(&b, "testbed %s: history %d → %d run(s)", d.Testbed, d.RunsBefore, d.RunsAfter)
	if d.Replaced && d.RunsBefore > 0 {
		b.WriteString(" (history replaced)")
	}
	b.WriteString("\n")
	for _, t := range d.Dropped {
		fmt.Fprintf(&b, "  - drop run recorded %s\n", t.UTC().Format(time.RFC3339))
	}
	if d.ScenarioHashChanged {
		b.WriteString("  ! the scenario file changed since the last update\n")
	}
	for _, id := range d.NewPoints {
		fmt.Fprintf(&b, "  + point %s\n", id)
	}
	for _, id := range d.Unstable {
		fmt.Fprintf(&b, "  ~ point %s recorded as unstable: it did not settle; the history keeps its status and kept trials\n", id)
	}
	for _, id := range d.MissingPoints {
		if d.Replaced {
			fmt.Fprintf(&b, "  - point %s (not in this run)\n", id)
		} else {
			fmt.Fprintf(&b, "  ? point %s not in this run (kept in older history)\n", id)
		}
	}
	for _, c := range d.Changes {
		if c.Before == 0 {
			fmt.Fprintf(&b, "  %s %s: first value %s\n", c.Point, c.Metric, FormatValue(c.Metric, c.Run))
			continue
		}
		fmt.Fprintf(&b, "  %s %s: history %s, this run %s (%+.1f%%)", c.Point, c.Metric,
			FormatValue(c.Metric, c.Before), FormatValue(c.Metric, c.Run), 100*(c.Run/c.Before-1))
		if c.MDEAfter > 0 {
			fmt.Fprintf(&b, ", detectable change %s → %s", numfmt.HistoryMDE(c.MDEBefore), numfmt.HistoryMDE(c.MDEAfter))
		}
		b.WriteString("\n")
	}
	return b.String()
}
