package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/internal/kinds/openai/llmsim"
)

// syncBuffer lets the test read output while the command writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestServeAnswersHealthAndStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--http-port", "0", "--grpc-port", "0", "--metrics-port", "0", "--models", "simple,delay",
			"--model-param", "delay.delay=1ms"}, strings.NewReader(""), &out, &errb)
	}()
	re := regexp.MustCompile(`Started HTTPService at http://(\S+)`)
	var addr string
	deadline := time.Now().Add(10 * time.Second)
	for addr == "" && time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			addr = m[1]
		}
		time.Sleep(10 * time.Millisecond)
	}
	if addr == "" {
		t.Fatalf("no address printed; stdout %q stderr %q", out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "Started GRPCInferenceService at 127.0.0.1:") {
		t.Errorf("gRPC address missing from %q", out.String())
	}
	resp, err := http.Get("http://" + addr + "/v2/health/ready")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("ready: status %d", resp.StatusCode)
	}
	m := regexp.MustCompile(`Started Metrics Service at (\S+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("metrics address missing from %q", out.String())
	}
	resp, err = http.Get("http://" + m[1] + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `nv_inference_count{model="delay",version="1"} 0`) {
		t.Errorf("metrics: status %d\n%s", resp.StatusCode, body)
	}
	cancel()
	select {
	case code := <-done:
		if code != exitcode.OK {
			t.Fatalf("exit %d, stderr %q", code, errb.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop after cancel")
	}
}

func TestServeRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--model-param", "nodot=1"},
		{"serve", "--model-param", "delay.delay=-1s", "--http-port", "0", "--grpc-port", "0"},
		{"serve", "--models", "nosuchmodel", "--http-port", "0", "--grpc-port", "0"},
		{"serve", "--tls-cert", "a.pem"},
		{"serve", "--http-port", "70000"},
		{"serve", "--flavor", "mlserver", "--http-port", "0", "--grpc-port", "0"},
		{"serve", "--metrics-port", "-2"},
		{"serve", "--repository", "simple,nosuchmodel", "--http-port", "0", "--grpc-port", "0"},
		{"serve", "--repository", "simple", "--models", "delay", "--http-port", "0", "--grpc-port", "0"},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), args, strings.NewReader(""), &out, &errb)
		if code != exitcode.Invalid {
			t.Errorf("%v: exit %d, want %d (stderr %q)", args, code, exitcode.Invalid, errb.String())
		}
	}
}

func TestServeFlavorFlag(t *testing.T) {
	for flag, want := range map[string]string{"triton": "triton", "kserve": "kserve"} {
		opts, err := serveFlags{flavor: flag, httpPort: 0, grpcPort: 0, host: "127.0.0.1"}.options()
		if err != nil || string(opts.Flavor) != want {
			t.Errorf("--flavor %s: flavour %q, err %v", flag, opts.Flavor, err)
		}
	}
	if _, err := (serveFlags{flavor: "mlserver"}).options(); err == nil || !strings.Contains(err.Error(), "--flavor") {
		t.Errorf("--flavor mlserver: err %v, want one naming the flag", err)
	}
}

// serve --help is where a user of the LLM endpoints learns them: every
// endpoint and every simulated-engine parameter must be listed, each
// parameter with its defaults.
func TestServeHelpListsOpenAIEndpointsAndEngineParameters(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"serve", "--help"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	help := out.String()
	for _, want := range []string{"GET  /v1/models", "POST /v1/completions", "POST /v1/chat/completions", "stream_options.include_usage",
		"llm, llm_fp8"} {
		if !strings.Contains(help, want) {
			t.Errorf("serve --help lacks %q", want)
		}
	}
	for _, want := range []string{`decode_base +llm 8ms, llm_fp8 6ms +one decode step`, `decode_slowdown +1 +multiplies`} {
		if !regexp.MustCompile(want).MatchString(help) {
			t.Errorf("serve --help lacks %q", want)
		}
	}
	for _, k := range llmsim.ParamKeys() {
		if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(k) + ` +\S.* \S`).MatchString(help) {
			t.Errorf("serve --help does not describe parameter %s", k)
		}
	}
}
