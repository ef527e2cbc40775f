package openai

import "testing"

// A server that tags its models (Ollama: tiny:latest) serves the bare
// name at its default tag; another tag or name is not served.
func TestServedAs(t *testing.T) {
	served := []string{"small:latest", "tiny:latest", "llm"}
	for name, want := range map[string]bool{
		"tiny": true, "tiny:latest": true, "llm": true, "small": true,
		"tiny:q4": false, "huge": false, "llm:latest": false,
	} {
		if got := servedAs(served, name); got != want {
			t.Errorf("servedAs(%q) = %v, want %v", name, got, want)
		}
	}
}
