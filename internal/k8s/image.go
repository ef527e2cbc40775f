package k8s

import "strings"

// NormalizeImage is the image reference a node pulls or looks up for ref,
// as container runtimes read it (github.com/distribution/reference): a
// first component that is not a registry (no '.' or ':', not localhost,
// all lower case) means Docker Hub, and a single component is one of its
// library images. bare says ref named no registry: a user who loaded an
// image built as perfscen:v1 with podman has localhost/perfscen:v1 on the
// node, not the docker.io/library/perfscen:v1 the pods would look for.
func NormalizeImage(ref string) (full string, bare bool) {
	i := strings.IndexByte(ref, '/')
	if i >= 0 {
		first := ref[:i]
		if strings.ContainsAny(first, ".:") || first == "localhost" || strings.ToLower(first) != first {
			return ref, false
		}
		return "docker.io/" + ref, true
	}
	return "docker.io/library/" + ref, true
}
