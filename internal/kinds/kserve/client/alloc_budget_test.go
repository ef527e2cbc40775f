package client

import (
	"context"
	"net"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/kservev2"
	"github.com/perfscen/perfscen/internal/transport/h2test"
)

// Allocation budgets of one request at concurrency 1, as the runner sends
// it (a connection of the worker's own for HTTP, a timeout on every call).
// Allocations cost CPU twice, in malloc and in the collector, and the c=1
// path is where perfscen is compared with perf_analyzer; the benchmarks
// below fail when a change makes a request allocate more than this. Raise
// a budget only with a reason in the commit message.
const (
	// Reply body, response, outputs, output shapes, the reply header's
	// outputs and binary slices (8 measured when the budget was set); the
	// canned responder in the same process allocates nothing per request.
	httpConnAllocBudget = 8
	// grpc-go's stream, headers, frames and messages on both sides: the
	// server runs in the same process and is counted too (199.1 measured
	// when the budget was set).
	grpcAllocBudget = 205
	// The caller's own gRPC connection: the two HEADERS frames as the
	// Framer parses them, the reply message and its outputs as protobuf
	// decodes them (about 12), the response, the timeout header; the
	// request message and header fields are reused (21.0 measured when
	// the budget was set, with the frame-level test server in the same
	// process).
	grpcConnAllocBudget = 21
)

// allocsPerOp runs f b.N times and returns heap allocations per call,
// counted by the runtime, so the figure does not depend on -benchmem.
func allocsPerOp(b *testing.B, f func()) float64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	n := 0
	for b.Loop() {
		f()
		n++
	}
	runtime.ReadMemStats(&after)
	return float64(after.Mallocs-before.Mallocs) / float64(n)
}

func checkBudget(b *testing.B, got, budget float64) {
	b.Helper()
	b.ReportMetric(got, "allocs/req")
	// Half an allocation of slack: background work (the collector, a
	// timer) lands a few allocations in the count over a whole run.
	if got > budget+0.5 {
		b.Fatalf("%.1f allocations per request, budget %.0f: the concurrency-1 path allocates more than it did", got, budget)
	}
}

// cannedListener serves reply to every HTTP request on a loopback port.
func cannedListener(b *testing.B) string {
	sum, diff, _ := addSub(make([]byte, 64), make([]byte, 64))
	header := []byte(`{"model_name":"simple","model_version":"1","outputs":[` +
		`{"name":"OUTPUT0","datatype":"INT32","shape":[1,16],"parameters":{"binary_data_size":64}},` +
		`{"name":"OUTPUT1","datatype":"INT32","shape":[1,16],"parameters":{"binary_data_size":64}}]}`)
	body := kservev2.EncodeBinaryBody(header, sum, diff)
	reply := []byte("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n" +
		kservev2.HeaderContentLength + ": " + strconv.Itoa(len(header)) + "\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + string(body))
	return serveLoopback(b, func(c net.Conn) { serveCanned(c, reply) })
}

// budgetRequest is the request every budget is measured with: simple's
// two inputs without request parameters, as the runner sends it at c=1.
func budgetRequest() *InferRequest {
	req := simpleRequest("")
	req.Parameters = nil
	return req
}

// budgetConn is the caller's own connection of a client for opts, closed
// when the benchmark ends.
func budgetConn(b *testing.B, opts Options) Conn {
	conn := newClient(b, opts).(ConnClient).NewConn()
	b.Cleanup(func() { conn.Close() })
	return conn
}

// holdToBudget makes one call first (it connects), then fails the
// benchmark when a call allocates more than budget.
func holdToBudget(b *testing.B, budget float64, infer func() error) {
	b.Helper()
	call := func() {
		if err := infer(); err != nil {
			b.Fatal(err)
		}
	}
	call()
	checkBudget(b, allocsPerOp(b, call), budget)
}

func BenchmarkHTTPConnAllocsC1(b *testing.B) {
	conn := budgetConn(b, Options{Protocol: "http", URL: cannedListener(b), Timeout: 10 * time.Second})
	req, ctx := budgetRequest(), context.Background()
	holdToBudget(b, httpConnAllocBudget, func() error {
		_, err := conn.Infer(ctx, req, 10*time.Second)
		return err
	})
}

func BenchmarkGRPCAllocsC1(b *testing.B) {
	c := newClient(b, Options{Protocol: "grpc", URL: cannedGRPCServer(b), Timeout: 10 * time.Second})
	req := budgetRequest()
	holdToBudget(b, grpcAllocBudget, func() error {
		// The runner's own per-call timeout, as it sends at c=1.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := c.Infer(ctx, req)
		return err
	})
}

func BenchmarkGRPCConnAllocsC1(b *testing.B) {
	msg := simpleReplyMsg(b)
	fake := h2test.New(b, func(r *h2test.Reply) { r.OK(msg) })
	conn := budgetConn(b, Options{Protocol: "grpc", URL: fake.Addr(), Timeout: 10 * time.Second})
	req, ctx := budgetRequest(), context.Background()
	holdToBudget(b, grpcConnAllocBudget, func() error {
		_, err := conn.Infer(ctx, req, 10*time.Second)
		return err
	})
}
