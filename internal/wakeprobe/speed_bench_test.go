package wakeprobe

import (
	"math"
	"runtime"
	"slices"
	"testing"

	"github.com/perfscen/perfscen/internal/stats"
)

// BenchmarkKernelBesideModel runs, on one thread, batches of 8 through a
// dense MLP of mlp_reference's shape (256→512→256, 1 MiB of weights,
// internal/refserver) and the probe's kernel in turn, and reports each's
// CPU time and their ratio: how far a model's work per inference
// (server_work_infer) moves when the machine's speed moves under both.
// Blocks of 8 batches and 8 kernel passes are one sample each; the
// spread of the blocks' times (p10, p90) shows the states the machine
// passed through, and the ratio's spread how much of them the kernel
// cancels. Run it at rest and beside a load (scripts/busy.sh) and compare:
//
//	go test -run '^$' -bench KernelBesideModel -benchtime 20s ./internal/wakeprobe
//	scripts/busy.sh --load 10 -- go test -run '^$' -bench KernelBesideModel -benchtime 20s ./internal/wakeprobe
func BenchmarkKernelBesideModel(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	k := newKernelBuf()
	m := newBenchMLP()
	const block = 8
	var models, kernels, ratios []float64
	var mt, kt []float64
	for i := 0; i < b.N; i++ {
		a, _ := threadCPU()
		m.batch()
		c, _ := threadCPU()
		kns, ok := timeKernel(k)
		if !ok {
			b.Skip("no thread CPU clock")
		}
		mt, kt = append(mt, float64(c-a)/1e3), append(kt, float64(kns)/1e3)
		if len(mt) == block {
			mm, km := stats.Median(mt), stats.Median(kt)
			models, kernels, ratios = append(models, mm), append(kernels, km), append(ratios, mm/km)
			mt, kt = mt[:0], kt[:0]
		}
	}
	if len(ratios) < 10 {
		return // too short a run to say anything (b.N ramping up)
	}
	b.ReportMetric(stats.Median(models), "model-us/batch")
	b.ReportMetric(stats.Median(kernels), "kernel-us")
	b.ReportMetric(stats.Median(ratios), "model/kernel")
	b.ReportMetric(spread(models), "model-p90/p10")
	b.ReportMetric(spread(kernels), "kernel-p90/p10")
	b.ReportMetric(spread(ratios), "ratio-p90/p10")
}

// benchMLP is a replica of internal/refserver's mlp_reference: one sample
// at a time, one accumulator per dot product, every weight reloaded for
// every sample.
type benchMLP struct {
	w1, b1, w2, b2, x, h, y []float32
}

func newBenchMLP() *benchMLP {
	const in, hid, out = 256, 512, 256
	fill := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(math.Sin(float64(i))) / 16
		}
		return s
	}
	return &benchMLP{w1: fill(hid * in), b1: fill(hid), w2: fill(out * hid), b2: fill(out),
		x: fill(in), h: make([]float32, hid), y: make([]float32, out)}
}

func (m *benchMLP) batch() {
	for n := 0; n < 8; n++ {
		dense(m.w1, m.b1, m.x, m.h, true)
		dense(m.w2, m.b2, m.h, m.y, false)
	}
	kernelSink.Store(math.Float32bits(m.y[0]))
}

func dense(w, b, x, y []float32, relu bool) {
	nIn := len(x)
	for j := range y {
		s := b[j]
		row := w[j*nIn : (j+1)*nIn]
		for i, v := range row {
			s += v * x[i]
		}
		if relu && s < 0 {
			s = 0
		}
		y[j] = s
	}
}

// spread is a sample's p90 over its p10.
func spread(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	return stats.QuantileSorted(s, 0.9) / stats.QuantileSorted(s, 0.1)
}
