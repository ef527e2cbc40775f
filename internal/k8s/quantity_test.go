package k8s

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

// The resource flags are Kubernetes quantities, refused before any
// manifest is written when Kubernetes would refuse them: "1GB", "abc" and
// "-1Gi" were written into manifests kubectl rejected.
func TestResourceQuantities(t *testing.T) {
	for _, tc := range []struct {
		set  func(o *Options)
		want string
	}{
		{func(o *Options) { o.AgentMemory = "1GB" }, `--agent-memory "1GB": not a Kubernetes quantity`},
		{func(o *Options) { o.AgentCPU = "abc" }, `--agent-cpu "abc": not a Kubernetes quantity`},
		{func(o *Options) { o.CoordinatorMemory = "-1Gi" }, `--coordinator-memory "-1Gi": a resource request must be more than zero`},
		{func(o *Options) { o.CoordinatorCPU = "0m" }, `--coordinator-cpu "0m": a resource request must be more than zero`},
		{func(o *Options) { o.AgentCPU = "1.5" }, ""},
		{func(o *Options) { o.AgentMemory = "1e9" }, ""},
		{func(o *Options) { o.AgentMemory = "0.5Gi" }, ""},
		{func(o *Options) { o.AgentMemory = "" }, ""},
	} {
		o := testOptions()
		tc.set(&o)
		_, err := Write(o)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", o, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
}

// Whatever the grammar accepts, Kubernetes' own parser accepts with the
// same sign, so no manifest Kubernetes would refuse is written. (The
// grammar refuses a few forms the parser tolerates, such as a bare "Mi".)
func FuzzQuantity(f *testing.F) {
	for _, s := range []string{"1Gi", "500m", "2", "1GB", "abc", "-1Gi", "0", ".5", "5.", "1e3", "1E", "1e", "+1Ki", "0.0m", "1.5.5", "Mi", "", "1E-3", "12345678901234567890Ei"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !quantity.MatchString(s) {
			return
		}
		q, err := resource.ParseQuantity(s)
		if err != nil {
			t.Fatalf("%q: the grammar accepts it, resource.ParseQuantity says %v", s, err)
		}
		if positive(s) != (q.Sign() > 0) {
			t.Fatalf("%q: positive %v, Kubernetes' sign %d", s, positive(s), q.Sign())
		}
	})
}
