package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// serveKServe starts `perfscen serve --flavor kserve` on a free loopback
// port, a plain KServe v2 server without Triton's extensions, and returns
// its HTTP address.
func serveKServe(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(perfscenBin(t), "serve", "--flavor", "kserve", "--http-port", "0", "--grpc-port", "-1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	addr := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`Started HTTPService at http://(\S+)`)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		close(addr)
	}()
	select {
	case a, ok := <-addr:
		if !ok {
			t.Fatal("perfscen serve exited before listening")
		}
		return a
	case <-time.After(60 * time.Second):
		t.Fatal("perfscen serve did not start within 60s")
	}
	return ""
}

const binaryScenario = `version: 1
name: binary
server:
  url: %URL%
  protocol: http
  tensor_format: binary
  timeout: 5s
models:
  - name: simple
load:
  mode: iterations
  iterations: 20
`

// Problem 2, first case: a scenario that forces binary tensors against a
// plain KServe server. The server lists no binary tensor extension, so
// the run is refused before any load, naming it (exit 2): the answer no
// retry changes.
func TestBinaryTensorsAgainstPlainKServe(t *testing.T) {
	addr := serveKServe(t)
	dir := t.TempDir()
	sc := writeScenario(t, dir, "binary.yaml", strings.Replace(binaryScenario, "%URL%", "http://"+addr, 1))
	code, stdout, stderr := perfscen(t, "run", "-q", "--out-dir", dir, sc)
	if code != 2 || !strings.Contains(stdout+stderr, "binary_tensor_data") {
		t.Fatalf("exit %d, want 2 naming binary_tensor_data\n%s\n%s", code, stdout, stderr)
	}
}

// Problem 2, the case as it was seen: a server that claims the binary
// tensor extension (here a proxy adds it to a plain KServe server's
// metadata) and then refuses every binary request. No request succeeds:
// exit 3, "could not measure", with the server's own error text on the
// console, never a pass.
func TestEveryRequestRefusedByTheServer(t *testing.T) {
	target, err := url.Parse("http://" + serveKServe(t))
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(r *http.Response) error {
		if r.Request.URL.Path != "/v2" || r.StatusCode != http.StatusOK {
			return nil
		}
		var meta map[string]any
		b, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &meta); err != nil {
			return err
		}
		exts, _ := meta["extensions"].([]any)
		meta["extensions"] = append(exts, "binary_tensor_data")
		if b, err = json.Marshal(meta); err != nil {
			return err
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		r.ContentLength = int64(len(b))
		r.Header.Set("Content-Length", strconv.Itoa(len(b)))
		return nil
	}
	srv := httptest.NewServer(proxy)
	defer srv.Close()

	dir := t.TempDir()
	sc := writeScenario(t, dir, "binary.yaml", strings.Replace(binaryScenario, "%URL%", srv.URL, 1))
	code, stdout, stderr := perfscen(t, "run", "-q", "--out-dir", dir, sc)
	if code != 3 {
		t.Fatalf("exit %d, want 3\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "COULD NOT MEASURE") || !strings.Contains(stdout, "no request succeeded") {
		t.Errorf("console does not say nothing succeeded:\n%s", stdout)
	}
	// The server's own words, not only a status code.
	if !strings.Contains(stdout, "the binary tensor data extension is not supported") || strings.Contains(stdout, "PASS") {
		t.Errorf("console lacks the server's error text:\n%s", stdout)
	}
}
