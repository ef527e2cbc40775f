//go:build linux

package tritoncapi

import (
	"runtime"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/runner/plan"
)

// A point whose requests Triton still holds when it closes keeps its
// inputs pinned, referenced by the server until the server stops: no
// buffer Triton may read is unpinned, and no dropped runtime.Pinner's
// finalizer panics ("found leaking pinned pointer", which ended the run
// with exit 2 before). The hung model is an environment failure naming
// it (exit 3).
func TestCloseKeepsHeldInputsPinned(t *testing.T) {
	s := &server{}
	input := new([64]byte)
	synctest.Test(t, func(t *testing.T) {
		p := &point{s: s, m: &model{plan: plan.Model{Name: "hung"}}, owner: newRequestOwner()}
		p.pinner.Pin(input)
		p.owner.add() // a request Triton has not given back
		err := p.Close()
		if failure.KindOf(err) != failure.Environment || !strings.Contains(err.Error(), "model hung: Triton still held requests") {
			t.Fatalf("Close: %v (%s)", err, failure.KindOf(err))
		}
		p.owner.done()
	})
	if len(s.pinned) != 1 {
		t.Fatalf("the server keeps %d pins, want the closed point's", len(s.pinned))
	}
	runtime.GC() // the point is gone; its pins are the server's
	runtime.GC()
	s.unpinAll()
	if len(s.pinned) != 0 {
		t.Errorf("pins left after unpinAll: %d", len(s.pinned))
	}
}
