package refserver

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// maxBodyBytes bounds a request body before and after decompression.
const maxBodyBytes = 1 << 30

// readBody reads the request body, inflating gzip or deflate (zlib) as
// Content-Encoding says; other encodings are UNSUPPORTED as in Triton.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body := http.MaxBytesReader(w, r.Body, maxBodyBytes)
	var rd io.Reader = body
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(body)
		if err != nil {
			return nil, errorf(codeInvalidArg, "decompressing gzip request body: %v", err)
		}
		rd = zr
	case "deflate":
		zr, err := zlib.NewReader(body)
		if err != nil {
			return nil, errorf(codeInvalidArg, "decompressing deflate request body: %v", err)
		}
		rd = zr
	default:
		w.Header().Set("Accept-Encoding", "gzip, deflate")
		return nil, errorf(codeUnsupported, "Unsupported compression type")
	}
	b, err := io.ReadAll(io.LimitReader(rd, maxBodyBytes+1))
	if err != nil {
		return nil, errorf(codeInvalidArg, "reading request body: %v", err)
	}
	if len(b) > maxBodyBytes {
		return nil, errorf(codeInvalidArg, "request body exceeds %d bytes", maxBodyBytes)
	}
	return b, nil
}

// responseEncoding picks the highest-weighted of identity, deflate and gzip
// from Accept-Encoding ("" = identity).
func responseEncoding(accept string) string {
	best, bestQ := "", 0.0
	for _, part := range strings.Split(accept, ",") {
		fields := strings.Split(part, ";")
		name := strings.ToLower(strings.TrimSpace(fields[0]))
		if name != "gzip" && name != "deflate" && name != "identity" {
			continue
		}
		q := 1.0
		for _, f := range fields[1:] {
			f = strings.TrimSpace(f)
			if v, ok := strings.CutPrefix(f, "q="); ok {
				if x, err := strconv.ParseFloat(v, 64); err == nil {
					q = x
				}
			}
		}
		if q > bestQ {
			best, bestQ = name, q
		}
	}
	if best == "identity" {
		return ""
	}
	return best
}

func compress(enc string, b []byte) []byte {
	var buf bytes.Buffer
	var zw io.WriteCloser
	if enc == "gzip" {
		zw = gzip.NewWriter(&buf)
	} else {
		zw = zlib.NewWriter(&buf)
	}
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}
