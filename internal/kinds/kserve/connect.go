package kserve

import (
	"context"
	"fmt"
	"net"
	"slices"
	"time"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/kinds/kserve/client"
	"github.com/perfscen/perfscen/internal/transport"
	"github.com/perfscen/perfscen/runner/plan"
)

// protocols lists the protocols the plan's points use.
func protocols(p *plan.Plan) []plan.Protocol {
	seen := map[plan.Protocol]bool{}
	for _, pt := range p.Points {
		seen[pt.Protocol] = true
	}
	if len(seen) == 0 {
		seen[p.Server().Protocol] = true
	}
	out := make([]plan.Protocol, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// connect opens one client per protocol and waits until the server says it
// is ready, retrying until the connect timeout: a server that is still
// starting is not a failure, one that never answers is exit 3.
func connect(ctx context.Context, p *plan.Plan, urls map[plan.Protocol]string, connectTimeout time.Duration, dial dialFunc) (map[plan.Protocol]client.Client, error) {
	clients := map[plan.Protocol]client.Client{}
	closeAll := func() {
		for _, c := range clients {
			c.Close()
		}
	}
	for _, proto := range protocols(p) {
		opts, err := clientOptions(p, proto, urls[proto], dial)
		if err != nil {
			closeAll()
			return nil, err
		}
		c, err := client.New(ctx, opts)
		if err != nil {
			closeAll()
			return nil, failure.Invalid(fmt.Errorf("server: %w", err))
		}
		clients[proto] = c
		if err := kinds.WaitReady(ctx, c.ServerReady, fmt.Sprintf("server at %s (%s)", urls[proto], proto), connectTimeout); err != nil {
			closeAll()
			return nil, err
		}
	}
	return clients, nil
}

// dialFunc opens a client connection; nil means TCP.
type dialFunc = func(ctx context.Context, network, addr string) (net.Conn, error)

// clientOptions are the plan's settings for one protocol's client.
func clientOptions(p *plan.Plan, proto plan.Protocol, url string, dial dialFunc) (client.Options, error) {
	opts := client.Options{
		Protocol: proto,
		URL:      url,
		Dial:     dial,
		Timeout:  p.Server().Timeout,
		Headers:  p.Server().Headers,
		// gRPC always carries raw tensors; the choice is HTTP's.
		JSONTensors: p.Server().TensorFormat == plan.TensorJSON && proto == plan.ProtocolHTTP,
	}
	s, err := readSettings(p.Server())
	if err != nil {
		return opts, err
	}
	if proto == plan.ProtocolGRPC {
		opts.GRPCCompression = s.grpcCompression()
	}
	opts.MaxConnections = s.Connections
	opts.BusyPoll = s.busyPoll
	if t := p.Server().TLS; t.Enabled {
		cfg, err := transport.TLSConfig(t.CAFile, t.CertFile, t.KeyFile, t.ServerName, t.Insecure)
		if err != nil {
			return opts, failure.Invalid(fmt.Errorf("server.tls: %w", err))
		}
		opts.TLS = cfg
	}
	return opts, nil
}
