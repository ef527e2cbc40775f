package k8s

import "testing"

// Where a node looks for an image named in a manifest: what kubelet and
// containerd make of a name without a registry.
func TestNormalizeImage(t *testing.T) {
	for _, tc := range []struct {
		ref, full string
		bare      bool
	}{
		{"perfscen:v1", "docker.io/library/perfscen:v1", true},
		{"perfscen", "docker.io/library/perfscen", true},
		{"team/perfscen:v1", "docker.io/team/perfscen:v1", true},
		{"localhost/perfscen:v1", "localhost/perfscen:v1", false},
		{"localhost:5000/perfscen:v1", "localhost:5000/perfscen:v1", false},
		{"registry.example.com/perfscen:v1", "registry.example.com/perfscen:v1", false},
		{"docker.io/library/perfscen:v1", "docker.io/library/perfscen:v1", false},
		{"Registry/perfscen:v1", "Registry/perfscen:v1", false},
		{"perfscen@sha256:0123", "docker.io/library/perfscen@sha256:0123", true},
	} {
		full, bare := NormalizeImage(tc.ref)
		if full != tc.full || bare != tc.bare {
			t.Errorf("NormalizeImage(%q) = %q, %v; want %q, %v", tc.ref, full, bare, tc.full, tc.bare)
		}
	}
}
