package agentpods

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func load(t *testing.T, name string) []Pod {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	pods, err := DecodeList(b)
	if err != nil {
		t.Fatal(err)
	}
	return pods
}

// What keeps agents away, from pod lists as the API server writes them:
// the scheduler's refusal, an image that will not come, a container that
// ended, an eviction. Pods on their way up, pods being deleted and
// indexes the run does not have say nothing; agents with the same cause
// are one finding. unschedulable.json is what the API server of
// Kubernetes v1.34.4 listed for two agents asking 64 CPUs of a 2-CPU node
// (make k8s-check's cluster); mixed.json is written by hand.
func TestExplain(t *testing.T) {
	for _, tc := range []struct {
		file   string
		agents int
		want   []string // Text(false), then Text(true)
	}{
		{"unschedulable.json", 2, []string{
			"agent index(es) 0-1 not scheduled yet (pods perfscen-agents-0-rk6hq, perfscen-agents-1-mswhk): 0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
			"agent index(es) 0-1 never scheduled (pods perfscen-agents-0-rk6hq, perfscen-agents-1-mswhk): 0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
		}},
		{"mixed.json", 6, []string{
			"agent index(es) 1 ended (exit 2) (pod p-agents-1-ccccc)",
			"agent index(es) 2 failed (Evicted) (pod p-agents-2-ddddd): The node was low on resource: memory.\\nContainer agent was using 1Gi.",
			`agent index(es) 3, 5 waiting (ErrImageNeverPull) (pods p-agents-3-aaaaa, p-agents-5-ggggg): Container image "perfscen:v1" is not present with pull policy of Never`,
			"agent index(es) 1 ended (exit 2) (pod p-agents-1-ccccc)",
			"agent index(es) 2 failed (Evicted) (pod p-agents-2-ddddd): The node was low on resource: memory.\\nContainer agent was using 1Gi.",
			`agent index(es) 3, 5 never started (ErrImageNeverPull) (pods p-agents-3-aaaaa, p-agents-5-ggggg): Container image "perfscen:v1" is not present with pull policy of Never`,
		}},
	} {
		fs := Explain(load(t, tc.file), tc.agents)
		var got []string
		for _, f := range fs {
			got = append(got, f.Text(false))
		}
		for _, f := range fs {
			got = append(got, f.Text(true))
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.file, d)
		}
	}
}

// Hundreds of agents with one cause make one line of bounded length.
func TestExplainMany(t *testing.T) {
	one := load(t, "unschedulable.json")[0]
	var pods []Pod
	for i := 499; i >= 0; i-- {
		p := one
		p.Metadata.Name = "perfscen-agents-" + itoa(i) + "-x"
		p.Metadata.Annotations = map[string]string{IndexAnnotation: itoa(i)}
		if i == 250 {
			continue // running: says nothing
		}
		pods = append(pods, p)
	}
	fs := Explain(pods, 500)
	if len(fs) != 1 {
		t.Fatalf("%d findings", len(fs))
	}
	line := fs[0].Text(true)
	if !strings.HasPrefix(line, "agent index(es) 0-249, 251-499 never scheduled (pods perfscen-agents-0-x, perfscen-agents-1-x, perfscen-agents-2-x and 496 more): 0/1 nodes") || len(line) > 600 {
		t.Errorf("%d bytes: %s", len(line), line)
	}
}

// Lists of hundreds of pods come less often.
func TestIntervalFor(t *testing.T) {
	for _, tc := range []struct {
		agents int
		want   time.Duration
	}{{1, 5 * time.Second}, {100, 5 * time.Second}, {101, 10 * time.Second}, {500, 25 * time.Second}} {
		if got := IntervalFor(tc.agents); got != tc.want {
			t.Errorf("IntervalFor(%d) = %s, want %s", tc.agents, got, tc.want)
		}
	}
}

func itoa(i int) string { return Ranges([]int{i}) }

func TestRanges(t *testing.T) {
	for _, tc := range []struct {
		in   []int
		want string
	}{
		{nil, ""}, {[]int{3}, "3"}, {[]int{0, 1, 2}, "0-2"}, {[]int{0, 2, 3, 5}, "0, 2-3, 5"},
	} {
		if got := Ranges(tc.in); got != tc.want {
			t.Errorf("Ranges(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// Kubernetes' words reach a log line as one line of bounded length, and a
// clip never splits a character.
func TestClean(t *testing.T) {
	if got := clean("a\nb\x1b[31m\u0085c"); got != `a\nb\x1b[31m\x85c` {
		t.Errorf("clean: %q", got)
	}
	long := strings.Repeat("é", 300)
	got := clean(long)
	if !strings.HasSuffix(got, "…") || len(got) > maxDetail+len("…") || !strings.HasPrefix(long, strings.TrimSuffix(got, "…")) {
		t.Errorf("clipped to %d bytes: %q", len(got), got)
	}
}

// Whatever the API server (or something posing as it) sends is read
// without a panic and explained in single lines.
func FuzzDecodeList(f *testing.F) {
	for _, name := range []string{"unschedulable.json", "mixed.json"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, 6)
	}
	f.Add([]byte(`{"items":[{"metadata":{"annotations":{"batch.kubernetes.io/job-completion-index":"-1"}}}]}`), 1)
	f.Fuzz(func(t *testing.T, b []byte, agents int) {
		pods, err := DecodeList(b)
		if err != nil {
			return
		}
		for _, fd := range Explain(pods, agents%1000) {
			for _, line := range []string{fd.Text(false), fd.Text(true)} {
				if strings.ContainsAny(line, "\n\r") {
					t.Fatalf("a line break in %q", line)
				}
			}
			if len(fd.Indexes) != len(fd.Pods) || len(fd.Indexes) == 0 {
				t.Fatalf("%+v", fd)
			}
		}
	})
}
