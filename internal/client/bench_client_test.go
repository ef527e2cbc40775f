package client

import (
	"bufio"
	"bytes"
	"net"
	"strconv"
	"testing"

	"github.com/perfscen/perfscen/internal/kserve"
)

// BenchmarkHTTPInferClient answers from a minimal canned HTTP/1.1 responder
// instead of net/http's server, so that CPU and allocation profiles of the
// benchmark show mostly the client.
func BenchmarkHTTPInferClient(b *testing.B) {
	sum, diff, _ := addSub(make([]byte, 64), make([]byte, 64))
	header := []byte(`{"model_name":"simple","model_version":"1","outputs":[` +
		`{"name":"OUTPUT0","datatype":"INT32","shape":[1,16],"parameters":{"binary_data_size":64}},` +
		`{"name":"OUTPUT1","datatype":"INT32","shape":[1,16],"parameters":{"binary_data_size":64}}]}`)
	body := kserve.EncodeBinaryBody(header, sum, diff)
	reply := []byte("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n" +
		kserve.HeaderContentLength + ": " + strconv.Itoa(len(header)) + "\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + string(body))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { lis.Close() })
	go func() {
		for {
			conn, err := lis.Accept()
			if err != nil {
				return
			}
			go serveCanned(conn, reply)
		}
	}()
	c := newClient(b, Options{Protocol: "http", URL: lis.Addr().String()})
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
