package kserve

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/perfscen/perfscen/internal/kinds/kserve/client"
	"github.com/perfscen/perfscen/runner/plan"
)

// HasSequenceBatcher asks the server of p whether model m's configuration
// has a sequence batcher, once and without waiting for the server to be
// ready: perf_analyzer reads it there to send correlation ids with start
// and end flags. dial nil is TCP.
func HasSequenceBatcher(ctx context.Context, p *plan.Plan, m plan.Model, dial func(ctx context.Context, network, addr string) (net.Conn, error)) (bool, error) {
	proto := p.Server().Protocol
	if proto == "" {
		proto = plan.ProtocolHTTP
	}
	opts, err := clientOptions(p, proto, p.Server().URLFor(proto), dial)
	if err != nil {
		return false, err
	}
	c, err := client.New(ctx, opts)
	if err != nil {
		return false, err
	}
	defer c.Close()
	cfg, err := c.ModelConfig(ctx, m.Name, m.Version)
	if err != nil {
		return false, fmt.Errorf("model %q config: %w", m.Name, err)
	}
	if cfg == nil {
		return false, errors.New("the server has no model configuration")
	}
	return cfg.SequenceBatching, nil
}
