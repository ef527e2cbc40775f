package client

import (
	"bufio"
	"bytes"
	"net"
	"strconv"
	"testing"
)

// BenchmarkHTTPInferClient answers from a minimal canned HTTP/1.1 responder
// instead of net/http's server, so that CPU and allocation profiles of the
// benchmark show mostly the client.
func BenchmarkHTTPInferClient(b *testing.B) {
	c := newClient(b, Options{Protocol: "http", URL: cannedListener(b)})
	benchInfer(b, c)
}

// serveCanned answers every request on conn with reply, reading just
// enough of the request (headers and Content-Length bytes) to stay in step.
func serveCanned(conn net.Conn, reply []byte) {
	defer conn.Close()
	r := bufio.NewReader(conn)
	for {
		n := 0
		for {
			line, err := r.ReadSlice('\n')
			if err != nil {
				return
			}
			line = bytes.TrimRight(line, "\r\n")
			if len(line) == 0 {
				break
			}
			if k, v, ok := bytes.Cut(line, []byte(":")); ok && bytes.EqualFold(k, []byte("Content-Length")) {
				n, _ = strconv.Atoi(string(bytes.TrimSpace(v)))
			}
		}
		if _, err := r.Discard(n); err != nil {
			return
		}
		if _, err := conn.Write(reply); err != nil {
			return
		}
	}
}
