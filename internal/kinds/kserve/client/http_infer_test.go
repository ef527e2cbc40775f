package client

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/perfscen/perfscen/internal/kservev2"
	"github.com/perfscen/perfscen/internal/tensor"
	"github.com/perfscen/perfscen/internal/transport"
)

// Infer talks to the transport directly, so a redirect is not followed:
// it surfaces as the server's answer.
func TestHTTPInferDoesNotFollowRedirects(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(srv.Close)
	c := newClient(t, Options{Protocol: "http", URL: srv.URL})
	_, err := c.Infer(context.Background(), simpleRequest(""))
	var se *transport.ServerError
	if !errors.As(err, &se) || se.HTTPStatus != http.StatusTemporaryRedirect {
		t.Fatalf("want a ServerError with status 307, got %v", err)
	}
}

// Concurrent requests with different bodies each reach the server intact
// and with a Content-Length, whatever the pooled buffers went through
// before (run with -race).
func TestHTTPInferBodiesIntact(t *testing.T) {
	for _, gz := range []bool{false, true} {
		t.Run("gzip="+strconv.FormatBool(gz), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.ContentLength <= 0 {
					http.Error(w, "no Content-Length", http.StatusBadRequest)
					return
				}
				var body io.Reader = r.Body
				if r.Header.Get("Content-Encoding") == "gzip" {
					body = mustGunzip(t, r.Body)
				}
				data, _ := io.ReadAll(body)
				n, _ := strconv.Atoi(r.Header.Get(kservev2.HeaderContentLength))
				if n <= 0 || n > len(data) {
					http.Error(w, "bad header length", http.StatusBadRequest)
					return
				}
				// Echo the tensor back as the single output.
				raw := data[n:]
				hdr := []byte(`{"model_name":"simple","outputs":[{"name":"OUT","datatype":"UINT8","shape":[` +
					strconv.Itoa(len(raw)) + `],"parameters":{"binary_data_size":` + strconv.Itoa(len(raw)) + `}}]}`)
				w.Header().Set(kservev2.HeaderContentLength, strconv.Itoa(len(hdr)))
				w.Write(kservev2.EncodeBinaryBody(hdr, raw))
			}))
			t.Cleanup(srv.Close)
			c := newClient(t, Options{Protocol: "http", URL: srv.URL, Gzip: gz})
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for w := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 25 {
						raw := bytes.Repeat([]byte{byte(w*25 + i)}, 1+(w*97+i*31)%3000)
						req := &InferRequest{Model: "simple", Inputs: []Input{{Tensor: tensor.Tensor{
							Name: "IN", DataType: tensor.UINT8, Shape: []int64{int64(len(raw))}, Raw: raw}}}}
						out, err := c.Infer(context.Background(), req)
						if err != nil {
							errs <- err
							return
						}
						if len(out.Outputs) != 1 || !bytes.Equal(out.Outputs[0].Raw, raw) {
							errs <- errors.New("echoed tensor differs from the one sent")
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
		})
	}
}

func mustGunzip(t *testing.T, r io.Reader) io.Reader {
	zr, err := gzip.NewReader(r)
	if err != nil {
		t.Errorf("gzip body: %v", err)
		return bytes.NewReader(nil)
	}
	return zr
}
