package baseline

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/exitcode"
)

func TestDecodeErrors(t *testing.T) {
	tests := []struct{ file, want string }{
		{"malformed.json", "line 4:"},
		{"newer.json", "newer than this perfscen understands"},
		{"unknown_field.json", `unknown field "extra"`},
		{"no_version.json", "no format_version"},
		{"bad_key.json", `testbeds.tb1.id: "tb2" does not match its key`},
		{"negative.json", "testbeds.tb1.runs[0].points.m/c=1.summary.throughput"},
		{"trailing.json", "after top-level value"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			_, err := Load(filepath.Join("testdata", tt.file))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want error containing %q", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.file) {
				t.Errorf("error %q does not name the file", err)
			}
			if exitcode.Of(err) != exitcode.Invalid {
				t.Errorf("exit code %d, want %d", exitcode.Of(err), exitcode.Invalid)
			}
		})
	}
}

func TestLoadMissing(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "none.json"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("got %v, want not-exist", err)
	}
}

func TestRoundTripAndScenario(t *testing.T) {
	f := New("demo")
	if _, err := Update(f, mkRun("demo", 1, 2), UpdateOptions{Now: time.Unix(10, 0).UTC()}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "sub", "demo.json")
	if err := Save(path, f); err != nil {
		t.Fatal(err)
	}
	g, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := Encode(f)
	b, _ := Encode(g)
	if string(a) != string(b) {
		t.Fatalf("round trip differs:\n%s\n---\n%s", a, b)
	}
	if err := g.CheckScenario("other"); err == nil || exitcode.Of(err) != exitcode.Invalid {
		t.Fatalf("different scenario accepted: %v", err)
	}
	if _, err := Update(g, mkRun("other", 1), UpdateOptions{}); err == nil {
		t.Fatal("update with another scenario's run accepted")
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}

// server_work_infer changed units with format 3 (the probe's kernel): a
// ratio of a new run's work to an older history's would compare two
// kernels, not two builds, so the older values are dropped on reading and
// every other figure is kept.
func TestOldWorkIsDropped(t *testing.T) {
	for _, tt := range []struct {
		file     string
		wantWork bool
	}{{"work_v2.json", false}, {"work_v3.json", true}} {
		t.Run(tt.file, func(t *testing.T) {
			f, err := Load(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			p := f.Testbeds["tb1"].Runs[0].Points["m/c=1"]
			if got := len(p.Values("server_work_infer")) > 0; got != tt.wantWork {
				t.Errorf("trial work kept %v, want %v", got, tt.wantWork)
			}
			if _, got := p.Summary["server_work_infer"]; got != tt.wantWork {
				t.Errorf("summary work kept %v, want %v", got, tt.wantWork)
			}
			if v := p.Values("server_cpu_infer"); len(v) != 1 || v[0] != 405 {
				t.Errorf("server_cpu_infer %v, want [405]", v)
			}
			if p.Summary["throughput"] != 100 {
				t.Errorf("throughput %v, want 100", p.Summary["throughput"])
			}
		})
	}
}
