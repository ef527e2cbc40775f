package main

import (
	"fmt"
	"os"

	"golang.org/x/term"

	"github.com/perfscen/perfscen/internal/engine"
)

// progressFor shows the current model, sweep point, window and stability
// on a terminal (rewriting one line), and nothing otherwise: CI logs get the
// report, not a stream of carriage returns.
func progressFor(e *env, quiet bool) func(engine.Event) {
	f, ok := e.stderr.(*os.File)
	if quiet || !ok || !term.IsTerminal(int(f.Fd())) || e.getenv("CI") != "" {
		return nil
	}
	windows := 0
	return func(ev engine.Event) {
		switch ev.Kind {
		case engine.PointStarted:
			windows = 0
			fmt.Fprintf(f, "\r\033[K[%d/%d] %s: starting", ev.Index+1, ev.Total, ev.Point.ID)
		case engine.WindowDone:
			windows++
			state := "stabilizing"
			if ev.Stable {
				state = "stable"
			}
			fmt.Fprintf(f, "\r\033[K[%d/%d] %s: window %d, %.1f infer/s, %.0f usec, %s", ev.Index+1, ev.Total, ev.Point.ID, windows, ev.Window.Throughput, ev.Window.LatencyUs, state)
		case engine.PointDone:
			fmt.Fprintf(f, "\r\033[K[%d/%d] %s: %s, %.1f infer/s\n", ev.Index+1, ev.Total, ev.Point.ID, ev.Result.Status, ev.Result.Summary.Throughput)
		}
	}
}
