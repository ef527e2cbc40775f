package engine

import (
	"context"
	"encoding/binary"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/kinds/kserve"
	"github.com/perfscen/perfscen/internal/kinds/kserve/client"
	"github.com/perfscen/perfscen/internal/memnet"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/internal/shm"
	"github.com/perfscen/perfscen/internal/tensor"
	"github.com/perfscen/perfscen/runner/plan"
)

// checkLeaks fails the test when goroutines started during it outlive it.
// Register it first so it runs after every other cleanup.
func checkLeaks(t *testing.T) {
	t.Helper()
	// goleak compares goroutine stacks, not counts, so a goroutine that
	// ended while another started cannot hide a leak; it retries while
	// goroutines wind down, so no sleep stands in for that.
	existing := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, existing) })
}

// checkShm fails the test when this process left shared-memory objects.
func checkShm(t *testing.T) {
	t.Helper()
	prefix := strings.TrimPrefix(shm.NewKey(""), "/")
	t.Cleanup(func() {
		entries, _ := os.ReadDir(shm.Dir)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), prefix) {
				t.Errorf("left behind %s/%s", shm.Dir, e.Name())
			}
		}
	})
}

// testNet carries the test servers' traffic in memory: no socket, so the
// tests measure the runner rather than the machine's loopback, and they can
// run on testing/synctest's fake clock.
var testNet memnet.Network

var serverSeq atomic.Int64

// startServer starts a reference server on testNet, HTTP on host:8000 and
// gRPC on host:8001 for a host name of its own. Service times use plain
// timers, which synctest's clock fires exactly.
func startServer(t *testing.T, opts refserver.Options) *refserver.Server {
	t.Helper()
	host := "server" + strconv.FormatInt(serverSeq.Add(1), 10)
	if opts.HTTPAddr == "" {
		opts.HTTPAddr = host + ":8000"
	}
	if opts.GRPCAddr == "" {
		opts.GRPCAddr = host + ":8001"
	}
	opts.Listen = testNet.Listen
	opts.PlainTimers = true
	if opts.ShutdownGrace == 0 {
		opts.ShutdownGrace = 200 * time.Millisecond
	}
	s, err := refserver.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// startMetrics serves handler on testNet and returns its URL.
func startMetrics(t *testing.T, handler http.Handler) string {
	t.Helper()
	addr := "metrics" + strconv.FormatInt(serverSeq.Add(1), 10) + ":8002"
	ln, err := testNet.Listen(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: handler}
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(ln)
	}()
	t.Cleanup(func() {
		srv.Close()
		<-done
	})
	return "http://" + addr + "/metrics"
}

// metricsClient scrapes servers on testNet.
func metricsClient(t *testing.T) *http.Client {
	tr := &http.Transport{DialContext: testNet.Dial}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 5 * time.Second}
}

func newClient(t *testing.T, proto plan.Protocol, addr string) client.Client {
	t.Helper()
	c, err := client.New(context.Background(), client.Options{Protocol: proto, URL: addr, Dial: testNet.Dial})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func int32Tensor(name string, shape []int64, vals []int32) tensor.Tensor {
	raw := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(raw[4*i:], uint32(v))
	}
	return tensor.Tensor{Name: name, DataType: tensor.INT32, Shape: shape, Raw: raw}
}

// simpleData builds steps for the simple model with their expected outputs.
func simpleData(batch, steps int) *inputdata.Data {
	d := &inputdata.Data{Streams: [][]inputdata.Step{nil}, BatchSize: batch}
	for s := 0; s < steps; s++ {
		n := batch * 16
		a, b, sum, diff := make([]int32, n), make([]int32, n), make([]int32, n), make([]int32, n)
		for i := range a {
			a[i], b[i] = int32(i+s), int32(s+1)
			sum[i], diff[i] = a[i]+b[i], a[i]-b[i]
		}
		shape := []int64{int64(batch), 16}
		d.Streams[0] = append(d.Streams[0], inputdata.Step{
			Inputs:   []tensor.Tensor{int32Tensor("INPUT0", shape, a), int32Tensor("INPUT1", shape, b)},
			Expected: []tensor.Tensor{int32Tensor("OUTPUT0", shape, sum), int32Tensor("OUTPUT1", shape, diff)},
			Origin:   "step " + strconv.Itoa(s),
		})
	}
	return d
}

// fp32Data is one [batch, 4] FP32 request for the delay and identity models.
func fp32Data(batch int) *inputdata.Data {
	raw := make([]byte, 4*4*batch)
	for i := 0; i < 4*batch; i++ {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(float32(i)))
	}
	t := tensor.Tensor{Name: "INPUT0", DataType: tensor.FP32, Shape: []int64{int64(batch), 4}, Raw: raw}
	return &inputdata.Data{Streams: [][]inputdata.Step{{{Inputs: []tensor.Tensor{t}}}}, BatchSize: batch}
}

// testPlan is a small plan with short windows; points get the model alias
// "m" unless they set one.
func testPlan(url string, proto plan.Protocol, m plan.Measurement, models []plan.Model, pts ...plan.Point) *plan.Plan {
	for i := range pts {
		if pts[i].ID == "" {
			pts[i].ID = "p" + strconv.Itoa(i)
		}
		if pts[i].Model == "" {
			pts[i].Model = "m"
		}
		if pts[i].BatchSize == 0 {
			pts[i].BatchSize = 1
		}
	}
	return &plan.Plan{Scenario: "test", Servers: []plan.Server{{URL: url, Protocol: proto, Timeout: 10 * time.Second}},
		Models: models, Measurement: m, Points: pts}
}

// loose is a measurement that stabilizes quickly on a noisy test machine.
func loose() plan.Measurement {
	return plan.Measurement{Mode: plan.TimeWindows, Window: 100 * time.Millisecond, StabilityPct: 200,
		MaxTrials: 6, Warmup: 30 * time.Millisecond, Trials: 3}
}

func inputsOf(d *inputdata.Data) func(*plan.Point) (*inputdata.Data, error) {
	return func(*plan.Point) (*inputdata.Data, error) { return d, nil }
}

// servers is the one server of p, reached through c, as Deps.Servers
// holds it: the kserve kind's handle with statistics on.
func servers(p *plan.Plan, c client.Client, inputs func(*plan.Point) (*inputdata.Data, error)) map[string]kinds.Server {
	return map[string]kinds.Server{"": kserve.FromClient(context.Background(), p, c, inputs, true)}
}
