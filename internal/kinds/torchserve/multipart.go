package torchserve

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"mime/multipart"
	"net/textproto"
	"strings"
)

// multipartBody encodes body as the one part name of a multipart/form-data
// request, as perf_analyzer (curl's MIME API) sends TorchServe a file: a
// form field without a filename, with a Content-Type only when ct is set.
// The boundary derives from the content, so the same input gives the same
// bytes on every run. It returns the request body and its Content-Type.
func multipartBody(name, ct string, body []byte) ([]byte, string) {
	sum := sha256.Sum256(body)
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	// A boundary must not occur in the content; a hash of the content
	// plus a prefix makes a collision a non-event.
	_ = w.SetBoundary("perfscen-" + hex.EncodeToString(sum[:12]))
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="%s"`, escapeQuotes(name)))
	if ct != "" {
		h.Set("Content-Type", ct)
	}
	p, _ := w.CreatePart(h) // writes to a bytes.Buffer cannot fail
	_, _ = p.Write(body)
	_ = w.Close()
	return buf.Bytes(), w.FormDataContentType()
}

var quoteEscaper = strings.NewReplacer("\\", "\\\\", `"`, "\\\"")

func escapeQuotes(s string) string { return quoteEscaper.Replace(s) }
