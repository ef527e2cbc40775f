package grpc

import (
	"context"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/perfscen/perfscen/internal/transport"
)

// docs/scenario.md's "Errors and exit codes" of kind grpc names the
// status codes counted as the server unreachable: each must be one that
// callError turns into a transport failure (a DeadlineExceeded is an
// answer of a reached server, a failed request of that status).
func TestDocsUnreachableCodes(t *testing.T) {
	b, err := os.ReadFile("../../../docs/scenario.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "### Errors and exit codes")
	if start < 0 {
		t.Fatal("docs/scenario.md has no section \"Errors and exit codes\"")
	}
	section := doc[start:]
	if end := strings.Index(section[1:], "\n### "); end > 0 {
		section = section[:end+1]
	}
	codeName := regexp.MustCompile("`([A-Z][A-Za-z]+)`")
	found := 0
	for _, sentence := range strings.Split(section, ". ") {
		head, _, ok := strings.Cut(sentence, "as the server unreachable")
		if !ok {
			continue
		}
		for _, m := range codeName.FindAllStringSubmatch(head, -1) {
			var c codes.Code
			if err := c.UnmarshalJSON([]byte(`"` + strings.ToUpper(camelToSnake(m[1])) + `"`)); err != nil {
				t.Fatalf("%q names %s, not a status code: %v", sentence, m[1], err)
			}
			found++
			var te *transport.TransportError
			if err := callError(context.Background(), "/a.B/C", status.Error(c, "x")); !errors.As(err, &te) {
				t.Errorf("the docs count %s as the server unreachable; callError makes it %T: %v", m[1], err, err)
			}
		}
	}
	if found == 0 {
		t.Fatal("the section names no status code counted as the server unreachable")
	}
}

// camelToSnake turns DeadlineExceeded into Deadline_Exceeded.
func camelToSnake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return b.String()
}
