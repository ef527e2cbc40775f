package procacct

import (
	"context"
	"errors"
	"fmt"

	"github.com/perfscen/perfscen/internal/prom"
)

// ProcessCPU is the counter most Prometheus client libraries export for
// the process they live in (Go's, Python's, Java's simpleclient): the
// CPU time it has used, in seconds.
const ProcessCPU = "process_cpu_seconds_total"

// ErrNoProcessCPU says a metrics page carries no ProcessCPU.
var ErrNoProcessCPU = errors.New("the metrics page has no " + ProcessCPU)

// Scrape reads a metrics page.
type Scrape func(ctx context.Context) ([]prom.Sample, error)

// Prometheus is a server known only by its metrics page: a server on
// another machine. It says the server's CPU time, no more: the run-queue
// delay is not exported, and the counter moves in the kernel's 10 ms
// ticks, which a window of a few hundred inferences of a fast model can
// feel.
type Prometheus struct {
	url    string
	scrape Scrape
}

// NewPrometheus checks once that the page carries ProcessCPU.
func NewPrometheus(ctx context.Context, url string, scrape Scrape) (*Prometheus, error) {
	p := &Prometheus{url: url, scrape: scrape}
	if _, err := p.Read(ctx, ""); err != nil {
		return nil, err
	}
	return p, nil
}

// Read sums ProcessCPU over the page's series (one per process: a page
// that aggregates workers lists each).
func (p *Prometheus) Read(ctx context.Context, _ string) (Reading, error) {
	s, err := p.scrape(ctx)
	if err != nil {
		return Reading{}, err
	}
	v, ok := prom.Sum(s, ProcessCPU, nil)
	if !ok {
		return Reading{}, fmt.Errorf("%s: %w", p.url, ErrNoProcessCPU)
	}
	if v < 0 {
		return Reading{}, fmt.Errorf("%s: %s is negative (%g)", p.url, ProcessCPU, v)
	}
	return Reading{CPUNs: uint64(v * 1e9)}, nil
}

// PerModel is false: a process's CPU serves every model.
func (p *Prometheus) PerModel() bool { return false }

// Beside is false: the server runs elsewhere.
func (p *Prometheus) Beside() bool { return false }

// Describe names what is measured.
func (p *Prometheus) Describe() string {
	return ProcessCPU + " at " + p.url + " (CPU time only: the run-queue delay of a server on another machine is not exported)"
}

// Notes are none.
func (p *Prometheus) Notes() []string { return nil }

// Close does nothing.
func (p *Prometheus) Close() error { return nil }
