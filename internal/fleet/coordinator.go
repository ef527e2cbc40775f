package fleet

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/perfscen/perfscen/internal/engine"
	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/fleet/fleetpb"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// DefaultListen is where a coordinator listens unless told otherwise: the
// loopback interface, so a coordinator is not reachable from other hosts
// by accident.
const DefaultListen = "127.0.0.1:7700"

// Defaults of the coordinator's timing.
const (
	DefaultHeartbeat = time.Second
	DefaultWait      = 2 * time.Minute
	// missedBeats is how many heartbeats of silence lose an agent (or, on
	// the agent, the coordinator).
	missedBeats = 3
	// syncProbes is how many clock round trips an agent answers before it
	// counts as ready; later heartbeats keep refining the estimate.
	syncProbes = 8
	// estimateWindow is how many recent round trips an estimate looks at.
	estimateWindow = 32
)

// CoordinatorOptions configure a coordinator.
type CoordinatorOptions struct {
	// Agents is how many agents the run needs.
	Agents int
	// Listen is the address to listen on (DefaultListen).
	Listen string
	// Token is the shared secret agents must present; required unless
	// TLS requires and verifies client certificates (mutual TLS).
	Token string
	// Version is this perfscen's; agents must run the same.
	Version string
	// Plan is the scenario run; agents must load the same file (hash).
	Plan *plan.Plan
	// Heartbeat is the ping period (DefaultHeartbeat).
	Heartbeat time.Duration
	// Wait bounds how long the coordinator waits for its agents (DefaultWait).
	Wait time.Duration
	// Log hears of agents joining, refused, ready and lost.
	Log io.Writer
	// Net, when set, listens in memory (tests).
	Net *kinds.Net
	// TLS, when set, serves TLS with it.
	TLS *tls.Config

	// limits, when set, replace defaultLimits (tests).
	limits *limits
}

// Coordinator is the fleet's side in the coordinating process: it accepts
// agents, holds them at a barrier until all are ready, measures their clock
// offsets, starts sessions on all of them (engine.Remote) and merges their
// windows; the engine and the verdict run once, here.
type Coordinator struct {
	opts  CoordinatorOptions
	clock *Clock
	ln    net.Listener
	srv   *grpc.Server
	serve chan struct{}

	limits  limits
	door    *door         // who may hold a connection
	joining chan struct{} // a slot per stream waiting for its Hello

	mu      sync.Mutex
	changed chan struct{} // closed and replaced when agents change
	agents  []*member     // by index; nil until joined

	// strangers are peers refused before they proved themselves (no or
	// a wrong token, a TLS handshake refused, too many connections):
	// anyone on the network. misfits are peers that proved themselves
	// and were refused all the same (version, scenario, data, index).
	strangers, misfits ledger
	invalid            bool // a misfit's setup was wrong: the deployment's mistake

	readyErr error // an agent could not reach the servers
	started  bool  // the barrier released: a lost agent ends the run
	lost     error // the first agent lost after the barrier
	sessions map[uint64]*session
	finished bool

	windows atomic.Int64 // window reports received
	bytes   atomic.Int64 // their protobuf size
	// data is the digest of the scenario's input-data files (DataDigest),
	// dataFiles their names.
	data      string
	dataFiles []string
	// wireIn and wireOut are every byte of the agents' connections
	// (countingListener), received and sent.
	wireIn, wireOut atomic.Int64
}

// member is one agent in the coordinator.
type member struct {
	index                     int
	name, host, addr, version string
	send                      chan *fleetpb.CoordinatorMessage
	quit                      chan struct{} // closed when the member is dropped
	quitOnce                  sync.Once
	heard                     atomic.Int64 // coordinator clock of its last message
	mu                        sync.Mutex
	est                       *Estimator
	pings                     map[uint64]int64
	ready                     bool
	windows, reportBytes      int64
}

func (m *member) String() string {
	return fmt.Sprintf("agent %d (%s)", m.index, m.name)
}

// Listen starts a coordinator on opts.Listen.
func Listen(opts CoordinatorOptions) (*Coordinator, error) {
	if opts.Agents < 1 {
		return nil, failure.Invalid(fmt.Errorf("--agents %d: at least one agent", opts.Agents))
	}
	if opts.Token == "" && (opts.TLS == nil || opts.TLS.ClientAuth != tls.RequireAndVerifyClientCert) {
		return nil, failure.Invalid(fmt.Errorf("agents need a shared token (set %s or --token-file) or mutual TLS (--agents-tls-client-ca)", TokenEnv))
	}
	if len(opts.Token) > maxToken {
		return nil, failure.Invalid(fmt.Errorf("the agent token is %d bytes; at most %d (it travels in every stream's metadata)", len(opts.Token), maxToken))
	}
	if opts.Listen == "" {
		opts.Listen = DefaultListen
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = DefaultHeartbeat
	}
	if opts.Wait <= 0 {
		opts.Wait = DefaultWait
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if _, _, err := net.SplitHostPort(opts.Listen); err != nil {
		return nil, failure.Invalid(fmt.Errorf("--listen %s: %w", opts.Listen, err))
	}
	var ln net.Listener
	var err error
	if opts.Net != nil {
		ln, err = opts.Net.Listen(context.Background(), "tcp", opts.Listen)
	} else {
		ln, err = net.Listen("tcp", opts.Listen)
	}
	if err != nil {
		return nil, failure.Env(fmt.Errorf("listening for agents on %s: %w", opts.Listen, err))
	}
	data, files, err := DataDigest(opts.Plan)
	if err != nil {
		return nil, failure.Invalid(err)
	}
	lim := defaultLimits(opts.Agents)
	if opts.limits != nil {
		lim = *opts.limits
	}
	c := &Coordinator{opts: opts, clock: NewClock(0), changed: make(chan struct{}), data: data, dataFiles: files,
		agents: make([]*member, opts.Agents), sessions: map[uint64]*session{}, serve: make(chan struct{}),
		limits: lim, joining: make(chan struct{}, lim.joining)}
	c.door = &door{strangers: lim.strangers, agents: lim.agentConns, deadline: lim.prove, evicted: func(addr string) {
		c.refuse(unnamed(addr), fmt.Sprintf("closed to make room: %d connections without the token were open (the coordinator's limit)", lim.strangers), false, false)
	}}
	c.ln = countingListener{Listener: ln, in: &c.wireIn, out: &c.wireOut, door: c.door}
	ln = c.ln
	so := lim.serverOptions()
	if opts.TLS != nil {
		so = append(so, grpc.Creds(serverGate{credentials.NewTLS(opts.TLS), func(addr, why string) {
			c.refuse(unnamed(addr), why, false, false)
		}}))
	}
	c.srv = grpc.NewServer(so...)
	fleetpb.RegisterFleetServer(c.srv, &handler{c: c})
	go func() {
		defer close(c.serve)
		_ = c.srv.Serve(ln)
	}()
	return c, nil
}

// Addr is the address agents dial.
func (c *Coordinator) Addr() string { return c.ln.Addr().String() }

func (c *Coordinator) logf(format string, args ...any) {
	fmt.Fprintf(c.opts.Log, "perfscen: "+format+"\n", args...)
}

// notify wakes whoever waits on the agents' state; c.mu held.
func (c *Coordinator) notifyLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// WaitReady is the barrier: it returns once every agent joined, reached
// the servers and answered its clock probes, or fails after opts.Wait
// naming the agents missing and those refused. The error's kind is
// invalid input when an agent that proved itself was refused for its
// setup (version, scenario, overrides, data, index), else environment:
// refusals of peers without the token do not count (refuse).
func (c *Coordinator) WaitReady(ctx context.Context) error {
	deadline := time.NewTimer(c.opts.Wait)
	defer deadline.Stop()
	c.logf("waiting for %d agent(s) on %s", c.opts.Agents, c.Addr())
	for {
		c.mu.Lock()
		if c.readyErr != nil {
			err := c.readyErr
			c.mu.Unlock()
			return err
		}
		var missing []string
		for i, m := range c.agents {
			if m == nil || !m.isReady() {
				missing = append(missing, fmt.Sprint(i))
			}
		}
		if len(missing) == 0 {
			c.started = true
			c.mu.Unlock()
			for _, m := range c.members() {
				e, _ := m.estimate()
				c.logf("%s: clock offset %+.6fs ± %.6fs (round trip %s)", m, e.Offset.Seconds(), e.Error.Seconds(), e.RTT)
			}
			c.logf("all %d agent(s) ready", c.opts.Agents)
			return nil
		}
		changed := c.changed
		c.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			refused := c.Refused()
			c.mu.Lock()
			invalid := c.invalid
			c.mu.Unlock()
			msg := fmt.Sprintf("%d of %d agent(s) ready after %s; missing agent index(es) %s", c.opts.Agents-len(missing), c.opts.Agents, c.opts.Wait, strings.Join(missing, ", "))
			if len(refused) > 0 {
				msg += "; refused: " + strings.Join(refused, "; ")
			}
			if invalid {
				return failure.Invalid(errors.New(msg))
			}
			return failure.Env(errors.New(msg))
		}
	}
}

// refuse counts and (rate-limited by the ledger) logs a peer refused:
// who, why, whether it had proved itself (a token, or mutual TLS alone),
// and whether its setup was at fault. Only a peer that proved itself can
// make the run's exit 2 when the agents fall short: it is part of the
// deployment, so its wrong version, scenario, data or index is the
// deployment's mistake, which no retry mends. A peer without the token
// could be anyone who reaches the port: a stranger's knock must not
// turn a run that misses an agent (exit 3) into an invalid one.
func (c *Coordinator) refuse(who, reason string, authenticated, invalid bool) {
	c.mu.Lock()
	l := &c.strangers
	if authenticated {
		l = &c.misfits
		c.invalid = c.invalid || invalid
	}
	line := l.add(who, reason)
	c.notifyLocked()
	c.mu.Unlock()
	if line != "" {
		c.logf("%s", line)
	}
}

// unnamed names a peer that has not said its name, or not proved it:
// by its host alone, since its retries come from new ports.
func unnamed(addr string) string { return "an agent from " + hostOf(addr) }

// members are the joined agents in index order.
func (c *Coordinator) members() []*member {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*member
	for _, m := range c.agents {
		if m != nil {
			out = append(out, m)
		}
	}
	return out
}

func (m *member) isReady() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ready && m.est.Len() >= syncProbes
}

func (m *member) estimate() (Estimate, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.est.Estimate()
}

// Finish tells every agent the run is over and stops serving. code is
// the run's exit code when it never started (the agents exit with it, so
// their Job fails with the coordinator's), 0 when it ended.
func (c *Coordinator) Finish(reason string, code int) {
	c.mu.Lock()
	c.finished = true
	ms := append([]*member(nil), c.agents...)
	c.mu.Unlock()
	for _, m := range ms {
		if m != nil {
			m.post(&fleetpb.CoordinatorMessage{Body: &fleetpb.CoordinatorMessage_Finish{Finish: &fleetpb.Finish{Reason: reason, ExitCode: int32(code)}}})
		}
	}
	// GracefulStop waits for the agents' streams to end: each agent ends
	// its stream on Finish; a vanished one is cut by its missed heartbeats.
	done := make(chan struct{})
	go func() {
		c.srv.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(missedBeats * c.opts.Heartbeat):
		c.srv.Stop()
		<-done
	}
	<-c.serve
}

// Close stops the coordinator at once (its run ended before it began).
func (c *Coordinator) Close() {
	c.srv.Stop()
	<-c.serve
}

// Refused names the agents refused so far, with why and how often:
// those that proved themselves first, then strangers; bounded
// (maxRefusalKeys of each, then a count).
func (c *Coordinator) Refused() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append(c.misfits.entries(), c.strangers.entries()...)
}

// Info describes the agents for the result.
func (c *Coordinator) Info() []result.Agent {
	var out []result.Agent
	for _, m := range c.members() {
		e, _ := m.estimate()
		m.mu.Lock()
		a := result.Agent{Index: m.index, Name: m.name, Host: m.host, Address: m.addr, Version: m.version,
			ClockOffsetNs: int64(e.Offset), ClockErrorNs: int64(e.Error), RoundTripNs: int64(e.RTT),
			Windows: m.windows, WindowBytes: m.reportBytes}
		m.mu.Unlock()
		out = append(out, a)
	}
	return out
}

// Cost is the coordinator's traffic for the figures: window reports
// received and the size of their protobuf messages (no framing).
func (c *Coordinator) Cost() (windows, bytes int64) { return c.windows.Load(), c.bytes.Load() }

// Wire is every byte the agents' connections carried, in (from the
// agents) and out: TLS, HTTP/2 and gRPC framing, handshakes, clock
// probes, heartbeats, session control and reports; only TCP/IP lies
// below.
func (c *Coordinator) Wire() (in, out int64) { return c.wireIn.Load(), c.wireOut.Load() }

// engine.Remote

var _ engine.Remote = (*Coordinator)(nil)

// Lead is how far ahead a session's epoch lies: time for the start to
// reach every agent (the slowest round trip, twice) and for the agents'
// workers to start.
func (c *Coordinator) Lead() time.Duration {
	lead := 200 * time.Millisecond
	for _, m := range c.members() {
		if e, ok := m.estimate(); ok {
			lead = max(lead, 200*time.Millisecond+2*e.RTT)
		}
	}
	return lead
}

// Agents names the agents in index order.
func (c *Coordinator) Agents() []string {
	var out []string
	for _, m := range c.members() {
		out = append(out, m.String())
	}
	return out
}

// Start starts spec on every agent: each gets its shard and the epoch on
// its own clock (the coordinator's plus its measured offset).
func (c *Coordinator) Start(ctx context.Context, spec engine.SessionSpec) engine.RemoteSession {
	ms := c.members()
	s := newSession(c, spec, ms)
	c.mu.Lock()
	lost := c.lost
	c.sessions[spec.ID] = s
	c.mu.Unlock()
	if lost != nil {
		s.fail(lost)
		return s
	}
	epoch := c.clock.NS(spec.Epoch)
	var offsets []string
	for _, m := range ms {
		sh, err := engine.ShardOf(spec, m.index, len(ms))
		if err != nil {
			s.fail(failure.Invalid(fmt.Errorf("%s: %w", m, err)))
			return s
		}
		e, _ := m.estimate()
		offsets = append(offsets, fmt.Sprintf("agent %d offset %dns ± %dns", m.index, e.Offset, e.Error))
		m.post(&fleetpb.CoordinatorMessage{Body: &fleetpb.CoordinatorMessage_Start{Start: &fleetpb.StartSession{
			Id: spec.ID, Point: int32(spec.Point), EpochNs: epoch + int64(e.Offset),
			WarmupNs: int64(spec.Warmup), WindowNs: int64(spec.Window), Whole: spec.Whole, Budget: sh.Budget,
			Workers: int32(sh.Workers), WorkerBase: int32(sh.WorkerBase), WorkerTotal: int32(sh.WorkerTotal),
			MaxWorkers: int32(sh.MaxWorkers), Rate: spec.Rate > 0, RequestRate: sh.Rate, PhaseNs: int64(sh.Phase),
			Seed: sh.Seed, DrainNs: int64(spec.Drain),
		}}})
	}
	c.logf("session %d: point %s on %d agent(s), epoch %d (coordinator's clock); %s", spec.ID, c.pointID(spec.Point), len(ms), epoch, strings.Join(offsets, ", "))
	return s
}

func (c *Coordinator) pointID(i int) string {
	if c.opts.Plan != nil && i >= 0 && i < len(c.opts.Plan.Points) {
		return c.opts.Plan.Points[i].ID
	}
	return fmt.Sprint(i)
}

func (c *Coordinator) endSession(id uint64) {
	c.mu.Lock()
	delete(c.sessions, id)
	c.mu.Unlock()
}

func (c *Coordinator) session(id uint64) *session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessions[id]
}

// agentLost drops m. Before the barrier its index is free again (a
// restarted pod may take it); after, the run cannot go on with a smaller
// load: every session fails, naming the agent.
func (c *Coordinator) agentLost(m *member, why error) {
	c.mu.Lock()
	if c.agents[m.index] != m {
		c.mu.Unlock()
		return
	}
	if c.finished {
		c.mu.Unlock()
		return
	}
	err := failure.Env(fmt.Errorf("%s lost: %w", m, why))
	var sessions []*session
	if c.started {
		if c.lost == nil {
			c.lost = err
		}
		for _, s := range c.sessions {
			sessions = append(sessions, s)
		}
	} else {
		c.agents[m.index] = nil
	}
	c.notifyLocked()
	c.mu.Unlock()
	m.drop()
	c.logf("%v", err)
	for _, s := range sessions {
		s.fail(err)
	}
}

func (m *member) drop() { m.quitOnce.Do(func() { close(m.quit) }) }

// post queues msg for m; a member gone drops it.
func (m *member) post(msg *fleetpb.CoordinatorMessage) {
	select {
	case m.send <- msg:
	case <-m.quit:
	}
}

// handler serves the Fleet service.
type handler struct {
	fleetpb.UnimplementedFleetServer
	c *Coordinator
}

// Join is one agent's stream, from Hello to the end of the run. The
// token, in the stream's metadata, is checked before a byte of the
// stream is read: a peer without it is refused at once and holds
// nothing. A peer with it has limits.hello to say Hello, in at most
// maxAgentMessage bytes, and at most limits.joining do so at once.
func (h *handler) Join(stream fleetpb.Fleet_JoinServer) error {
	c := h.c
	addr := "?"
	var conn *doorConn
	if p, ok := peer.FromContext(stream.Context()); ok {
		addr, conn = p.Addr.String(), connOf(p.Addr)
	}
	refusal := func(invalid bool, reason string) error {
		_ = stream.Send(&fleetpb.CoordinatorMessage{Body: &fleetpb.CoordinatorMessage_Refusal{Refusal: &fleetpb.Refusal{Reason: reason, Invalid: invalid}}})
		code := codes.FailedPrecondition
		if invalid {
			code = codes.PermissionDenied
		}
		return status.Error(code, reason)
	}
	// Without a token, mutual TLS alone vouched for the agent (Listen
	// allows no other way); with both, both must hold.
	if c.opts.Token != "" {
		if err := checkToken(stream.Context(), c.opts.Token); err != nil {
			c.refuse(unnamed(addr), err.Error(), false, false)
			if conn != nil {
				// Its connection ends: a refused stream holds nothing.
				c.door.refuse(conn)
			}
			// Invalid for the agent: its own setup is wrong, whatever it
			// means for the run.
			return refusal(true, err.Error())
		}
	}
	// The token (or mutual TLS, which let the stream this far) proves
	// the connection an agent's: the door keeps it.
	if conn != nil {
		if why := c.door.prove(conn); why != "" {
			c.refuse(unnamed(addr), why, true, false)
			if why == evictedWhy {
				// Not a refusal the agent should stop at: its
				// connection is closing, and it dials again.
				return status.Error(codes.Unavailable, why)
			}
			return refusal(false, why)
		}
	}
	select {
	case c.joining <- struct{}{}:
	default:
		reason := fmt.Sprintf("%d agents are joining at once already (the coordinator's limit)", c.limits.joining)
		c.refuse(unnamed(addr), reason, true, false)
		return refusal(false, reason)
	}
	first, err := h.recvHello(stream)
	<-c.joining
	if err != nil {
		// Silent, too large, malformed; not a peer that hung up.
		if !errors.Is(err, io.EOF) && status.Code(err) != codes.Canceled {
			c.refuse(unnamed(addr), status.Convert(err).Message(), true, false)
		}
		return err
	}
	hello := first.GetHello()
	if hello == nil {
		c.refuse(unnamed(addr), "its first message was not Hello", true, false)
		return status.Error(codes.InvalidArgument, "the first message must be Hello")
	}
	agentName := clean(hello.Name, maxPeerText)
	name := fmt.Sprintf("agent %q (index %d) from %s", agentName, hello.Index, addr)
	if hello.Index < 0 {
		name = fmt.Sprintf("agent %q from %s", agentName, addr)
	}
	// What the agent said is cleaned where it is quoted; the ledger
	// clips what it keeps, the agent hears the whole reason.
	refuse := func(invalid bool, format string, args ...any) error {
		reason := fmt.Sprintf(format, args...)
		c.refuse(name, reason, true, invalid)
		return refusal(invalid, reason)
	}
	if hello.Version != c.opts.Version {
		return refuse(true, "perfscen version %s, the coordinator runs %s", clean(hello.Version, maxPeerText), c.opts.Version)
	}
	if p := c.opts.Plan; p != nil && hello.ScenarioHash != p.ScenarioHash {
		return refuse(true, "scenario %s has hash %.12s…, the coordinator's %s has %.12s… (not the same file)",
			clean(hello.Scenario, maxPeerText), clean(hello.ScenarioHash, maxPeerText), p.Scenario, p.ScenarioHash)
	}
	if p := c.opts.Plan; p != nil && !slices.Equal(hello.Overrides, p.Overrides) {
		return refuse(true, "--set %s, the coordinator's --set %s (agents take the coordinator's --set flags, in its order)",
			clean(overridesText(hello.Overrides), maxRefusalText/2), overridesText(p.Overrides))
	}
	if hello.DataHash != c.data {
		return refuse(true, "the input data the scenario names (%s) has hash %s, the coordinator's has %s (not the same files)",
			strings.Join(c.dataFiles, ", "), shortHash(clean(hello.DataHash, maxPeerText)), shortHash(c.data))
	}
	m := &member{name: agentName, host: clean(hello.Host, maxPeerText), addr: addr, version: hello.Version,
		send: make(chan *fleetpb.CoordinatorMessage, 64), quit: make(chan struct{}),
		est: NewEstimator(estimateWindow), pings: map[uint64]int64{}}
	c.mu.Lock()
	idx, why := c.placeLocked(int(hello.Index))
	if why == "" {
		m.index = idx
		c.agents[idx] = m
		c.notifyLocked()
	}
	c.mu.Unlock()
	if why != "" {
		return refuse(!strings.Contains(why, "already has"), "%s", why)
	}
	m.heard.Store(c.clock.Now())
	c.logf("%s joined from %s (host %s)", m, addr, m.host)
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	sendErr := make(chan error, 1)
	go func() { sendErr <- h.sender(ctx, stream, m) }()
	m.post(&fleetpb.CoordinatorMessage{Body: &fleetpb.CoordinatorMessage_Welcome{Welcome: &fleetpb.Welcome{
		Index: int32(m.index), Agents: int32(c.opts.Agents), Run: c.scenario(), HeartbeatNs: int64(c.opts.Heartbeat)}}})
	go h.pinger(ctx, m)
	recvErr := make(chan error, 1)
	go func() { recvErr <- h.receive(stream, m) }()
	select {
	case err = <-recvErr:
	case err = <-sendErr:
	case <-m.quit:
		err = errors.New("dropped")
	}
	c.mu.Lock()
	finished := c.finished
	c.mu.Unlock()
	if finished && (err == nil || errors.Is(err, io.EOF)) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = errors.New("the agent ended its stream")
	}
	c.agentLost(m, lostReason(err))
	return nil
}

// lostReason words why an agent's stream ended. grpc-go reports a stream
// whose connection went away as Canceled ("context canceled"), which read
// as if the coordinator had cancelled the agent; the coordinator cancels
// nothing before its run is finished, so the connection closed on the
// agent's side.
func lostReason(err error) error {
	if status.Code(err) == codes.Canceled || errors.Is(err, context.Canceled) {
		return errors.New("its connection closed (the agent process ended or was killed, or the network between them dropped it)")
	}
	return err
}

// recvHello reads a stream's first message, for at most limits.hello: a
// peer that opens a stream and says nothing is cut then, and its
// goroutines end with it.
func (h *handler) recvHello(stream fleetpb.Fleet_JoinServer) (*fleetpb.AgentMessage, error) {
	type got struct {
		msg *fleetpb.AgentMessage
		err error
	}
	ch := make(chan got, 1)
	// Returning ends the stream, and with it this Recv.
	go func() {
		msg, err := stream.Recv()
		ch <- got{msg, err}
	}()
	t := time.NewTimer(h.c.limits.hello)
	defer t.Stop()
	select {
	case g := <-ch:
		return g.msg, g.err
	case <-t.C:
		return nil, status.Errorf(codes.DeadlineExceeded, "no Hello within %s", h.c.limits.hello)
	}
}

// placeLocked gives a joining agent its index: the one it asks for, else
// the lowest free one. why says why it cannot join.
func (c *Coordinator) placeLocked(want int) (int, string) {
	if c.started {
		return 0, "the run has started with its agents"
	}
	if want >= 0 {
		switch {
		case want >= len(c.agents):
			return 0, fmt.Sprintf("index %d is out of range: the run has %d agent(s) (0 to %d)", want, len(c.agents), len(c.agents)-1)
		case c.agents[want] != nil:
			return 0, fmt.Sprintf("index %d already has %s", want, c.agents[want])
		}
		return want, ""
	}
	for i, m := range c.agents {
		if m == nil {
			return i, ""
		}
	}
	return 0, fmt.Sprintf("the run already has its %d agent(s)", len(c.agents))
}

// sender writes m's queued messages; it is the stream's only writer.
func (h *handler) sender(ctx context.Context, stream fleetpb.Fleet_JoinServer, m *member) error {
	for {
		select {
		case msg := <-m.send:
			if p := msg.GetPing(); p != nil {
				// Stamped as it leaves, so queueing here is not mistaken
				// for network delay.
				p.SentNs = h.c.clock.Now()
				m.mu.Lock()
				m.pings[p.Seq] = p.SentNs
				m.mu.Unlock()
			}
			if err := stream.Send(msg); err != nil {
				return err
			}
			if msg.GetFinish() != nil {
				return nil
			}
		case <-ctx.Done():
			return ctx.Err()
		case <-m.quit:
			return nil
		}
	}
}

// pinger probes m's clock: a burst at joining, then one per heartbeat,
// and loses m after missedBeats heartbeats of silence.
func (h *handler) pinger(ctx context.Context, m *member) {
	var seq uint64
	ping := func() {
		seq++
		m.post(&fleetpb.CoordinatorMessage{Body: &fleetpb.CoordinatorMessage_Ping{Ping: &fleetpb.Ping{Seq: seq}}})
	}
	for range syncProbes {
		ping()
	}
	t := time.NewTicker(h.c.opts.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.quit:
			return
		case <-t.C:
			silent := time.Duration(h.c.clock.Now() - m.heard.Load())
			if silent > missedBeats*h.c.opts.Heartbeat {
				h.c.agentLost(m, fmt.Errorf("no message for %s (heartbeat %s)", silent.Round(time.Millisecond), h.c.opts.Heartbeat))
				return
			}
			ping()
		}
	}
}

// receive handles m's messages until its stream ends.
func (h *handler) receive(stream fleetpb.Fleet_JoinServer, m *member) error {
	c := h.c
	for {
		msg, err := stream.Recv()
		if err != nil {
			return err
		}
		now := c.clock.Now()
		m.heard.Store(now)
		switch b := msg.Body.(type) {
		case *fleetpb.AgentMessage_Pong:
			m.mu.Lock()
			if sent, ok := m.pings[b.Pong.Seq]; ok && sent == b.Pong.EchoNs {
				delete(m.pings, b.Pong.Seq)
				m.est.Add(Sample{Sent: sent, Agent: b.Pong.AgentNs, Received: now})
			}
			m.mu.Unlock()
			c.mu.Lock()
			c.notifyLocked()
			c.mu.Unlock()
		case *fleetpb.AgentMessage_Ready:
			if b.Ready.Error != "" {
				why := clean(b.Ready.Error, maxReportText)
				err := fmt.Errorf("%s could not reach the scenario's servers: %s", m, why)
				if b.Ready.Invalid {
					err = failure.Invalid(fmt.Errorf("%s: %s", m, why))
				} else {
					err = failure.Env(err)
				}
				c.logf("%v", err)
				c.mu.Lock()
				if c.readyErr == nil {
					c.readyErr = err
				}
				c.notifyLocked()
				c.mu.Unlock()
				continue
			}
			m.mu.Lock()
			m.ready = true
			m.mu.Unlock()
			c.logf("%s ready", m)
			c.mu.Lock()
			c.notifyLocked()
			c.mu.Unlock()
		case *fleetpb.AgentMessage_Window:
			size := int64(proto.Size(msg))
			c.windows.Add(1)
			c.bytes.Add(size)
			m.mu.Lock()
			m.windows++
			m.reportBytes += size
			m.mu.Unlock()
			if s := c.session(b.Window.Session); s != nil {
				s.window(m.index, windowOf(b.Window))
			}
		case *fleetpb.AgentMessage_Done:
			if s := c.session(b.Done.Session); s != nil {
				s.done(m.index, totalsOf(b.Done))
			}
		}
	}
}

func windowOf(w *fleetpb.WindowReport) engine.WindowReport {
	return engine.WindowReport{Index: int(w.Index), Start: time.Duration(w.StartNs), End: time.Duration(w.EndNs),
		Requests: w.Requests, Errors: w.Errors, Unreachable: w.Unreachable, SumUs: w.SumUs, MeanUs: w.MeanUs, M2: w.M2,
		MinLatency: time.Duration(w.MinNs), MaxLatency: time.Duration(w.MaxNs), SendRecv: time.Duration(w.SendRecvNs),
		Wait: time.Duration(w.WaitNs), Decoupled: w.Decoupled, Responses: w.Responses, FirstN: w.FirstN,
		FirstSumUs: w.FirstSumUs, Histogram: w.Histogram, Classes: classesIn(w.Classes), Sequences: w.Sequences, Delayed: w.Delayed}
}

func classesIn(cs []*fleetpb.ErrorClass) []result.ErrorClass {
	var out []result.ErrorClass
	for _, c := range cs {
		out = append(out, result.ErrorClass{Class: c.Class, Count: c.Count, Example: c.Example})
	}
	return out
}

func totalsOf(d *fleetpb.SessionDone) engine.Totals {
	t := engine.Totals{ErrorsTotal: d.ErrorsTotal, MismatchesTotal: d.MismatchesTotal, Checked: d.Checked,
		Late: d.Late, Dropped: d.Dropped, Err: d.Error, Classes: classesIn(d.Classes)}
	for _, e := range d.Errors {
		t.Errors = append(t.Errors, engine.Tally{Message: e.Message, Count: e.Count})
	}
	for _, e := range d.Mismatches {
		t.Mismatches = append(t.Mismatches, engine.Tally{Message: e.Message, Count: e.Count})
	}
	return t
}

func (c *Coordinator) scenario() string {
	if c.opts.Plan == nil {
		return ""
	}
	return c.opts.Plan.Scenario
}

func shortHash(h string) string {
	if h == "" {
		return "none (no files)"
	}
	if len(h) > 12 {
		return h[:12] + "…"
	}
	return h
}

func overridesText(set []string) string {
	if len(set) == 0 {
		return "none"
	}
	return "[" + strings.Join(set, " ") + "]"
}
