package runner

import (
	"testing"

	"github.com/perfscen/perfscen/internal/engine"
)

// Run hands the engine's progress on by converting its kinds: they must
// stay the same values.
func TestEventKindsMatchTheEngine(t *testing.T) {
	for _, k := range []struct {
		ours   EventKind
		engine engine.EventKind
	}{{PointStarted, engine.PointStarted}, {WindowDone, engine.WindowDone}, {PointDone, engine.PointDone}} {
		if EventKind(k.engine) != k.ours {
			t.Errorf("engine kind %d is runner kind %d", k.engine, k.ours)
		}
	}
}
