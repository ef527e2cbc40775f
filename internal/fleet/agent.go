package fleet

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"

	"github.com/perfscen/perfscen/internal/engine"
	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/fleet/fleetpb"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// DefaultJoinTimeout bounds how long an agent keeps trying to reach its
// coordinator.
const DefaultJoinTimeout = 2 * time.Minute

// AgentOptions configure an agent.
type AgentOptions struct {
	// Coordinator is the coordinator's host:port.
	Coordinator string
	// Index is the agent's index; -1 lets the coordinator choose.
	Index int
	Name  string
	Host  string
	// Token is the shared secret; empty joins without one (and is refused).
	Token   string
	Version string
	Plan    *plan.Plan
	// JoinTimeout bounds the attempts to reach the coordinator.
	JoinTimeout time.Duration
	// Log hears of joining, sessions and the end.
	Log io.Writer
	// Net, when set, dials in memory (tests).
	Net *kinds.Net
	// TLS, when set, dials with it; else plaintext.
	TLS *tls.Config
	// Clock is this host's clock (tests inject a skew).
	Clock *Clock
	// Open reaches and checks the scenario's servers, as a run does.
	Open func(ctx context.Context) (servers map[string]kinds.Server, closeAll func(), err error)
	// Engine tunes the sessions (tests: drain).
	Engine engine.Options
}

// Agent is one load host's part in a distributed run.
type agent struct {
	opts   AgentOptions
	stream fleetpb.Fleet_JoinClient
	send   chan *fleetpb.AgentMessage
	quit   chan struct{}
	once   sync.Once
	heard  atomic.Int64 // local clock of the coordinator's last message
	// run is set once the servers are open, before Ready; the coordinator
	// starts no session before it hears Ready.
	run   atomic.Pointer[engine.AgentRun]
	beat  time.Duration
	index int
	data  string // DataDigest of the plan

	mu       sync.Mutex
	sessions map[uint64]chan struct{}
	wg       sync.WaitGroup

	// tlsRefused closes when a handshake says the coordinator and this
	// agent will never agree (a certificate refused either way);
	// tlsErr is why.
	tlsRefused chan struct{}
	tlsOnce    sync.Once
	tlsErr     error
	probing    atomic.Bool
}

// silentClose hears of a plaintext connection the coordinator closed
// without a word, and asks (one probe at a time) whether it serves TLS:
// then no retry will ever join, and the agent stops with a
// configuration error.
func (a *agent) silentClose() {
	if !a.probing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer a.probing.Store(false)
		if speaksTLS(context.Background(), a.dial) {
			a.refusedByTLS(errors.New("it serves TLS and this agent dialled without (give --tls-ca, and --tls-cert with --tls-key if it asks for client certificates)"))
		}
	}()
}

// dial opens a raw connection to the coordinator, for probes.
func (a *agent) dial(ctx context.Context) (net.Conn, error) {
	if a.opts.Net != nil {
		return a.opts.Net.Dial(ctx, "tcp", a.opts.Coordinator)
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", a.opts.Coordinator)
}

// refusedByTLS ends the join at once: retrying a handshake that failed
// on a certificate only fails again.
func (a *agent) refusedByTLS(err error) {
	a.tlsOnce.Do(func() {
		a.tlsErr = err
		close(a.tlsRefused)
	})
}

// RunAgent joins the coordinator and serves its sessions until it
// finishes the run (nil), refuses the agent (invalid input, naming why),
// cannot be reached within the join timeout, or is lost (environment:
// the agent stops its load on its own after three heartbeats of
// silence).
func RunAgent(ctx context.Context, opts AgentOptions) error {
	if opts.JoinTimeout <= 0 {
		opts.JoinTimeout = DefaultJoinTimeout
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.Clock == nil {
		opts.Clock = NewClock(0)
	}
	host, port, err := net.SplitHostPort(opts.Coordinator)
	if err != nil || host == "" || port == "" {
		return failure.Invalid(fmt.Errorf("--coordinator %q: want host:port", opts.Coordinator))
	}
	data, _, err := DataDigest(opts.Plan)
	if err != nil {
		return failure.Invalid(err)
	}
	a := &agent{opts: opts, data: data, send: make(chan *fleetpb.AgentMessage, 64), quit: make(chan struct{}),
		sessions: map[uint64]chan struct{}{}, tlsRefused: make(chan struct{})}
	creds := credentials.TransportCredentials(plainGate{insecure.NewCredentials(), a.silentClose})
	if opts.TLS != nil {
		creds = clientGate{credentials.NewTLS(opts.TLS), a.refusedByTLS}
	}
	dial := []grpc.DialOption{grpc.WithTransportCredentials(creds),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 30 * time.Second, Timeout: 10 * time.Second})}
	if opts.Net != nil {
		dial = append(dial, grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return opts.Net.Dial(ctx, "tcp", addr)
		}))
	}
	// passthrough: the name is resolved at each dial, by the dialer, so a
	// coordinator whose DNS name appears late (a pod starting) is found.
	conn, err := grpc.NewClient("passthrough:///"+opts.Coordinator, dial...)
	if err != nil {
		return failure.Invalid(fmt.Errorf("--coordinator %s: %w", opts.Coordinator, err))
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	welcome, err := a.join(ctx, fleetpb.NewFleetClient(conn))
	if err != nil {
		return err
	}
	a.index, a.beat = int(welcome.Index), time.Duration(welcome.HeartbeatNs)
	if a.beat <= 0 {
		a.beat = DefaultHeartbeat
	}
	a.logf("joined the coordinator at %s as agent %d of %d (run %s)", opts.Coordinator, a.index, welcome.Agents, welcome.Run)
	a.heard.Store(opts.Clock.Now())
	sendErr := make(chan error, 1)
	go func() { sendErr <- a.sender() }()
	recvErr := make(chan error, 1)
	finished := make(chan *fleetpb.Finish, 1)
	go func() { recvErr <- a.receive(ctx, finished) }()
	defer a.stopAll()

	// notReady tells the coordinator why this agent cannot take part and
	// waits until it has heard: it answers by finishing the run (or the
	// stream ends). Returning at once would cancel the stream, and with
	// it the message still on its way, leaving the coordinator to report
	// the agent missing instead of naming the cause.
	notReady := func(ready *fleetpb.Ready, err error) error {
		a.post(&fleetpb.AgentMessage{Body: &fleetpb.AgentMessage_Ready{Ready: ready}})
		select {
		case <-finished:
		case <-recvErr:
		case <-time.After(missedBeats * a.beat):
		case <-ctx.Done():
		}
		return err
	}
	servers, closeAll, err := opts.Open(ctx)
	if err != nil {
		return notReady(&fleetpb.Ready{Error: clip(err.Error(), maxReportText), Invalid: failure.KindOf(err) == failure.InvalidInput}, err)
	}
	defer closeAll()
	run, err := engine.NewAgentRun(opts.Plan, servers, a.index, opts.Engine)
	if err != nil {
		return notReady(&fleetpb.Ready{Error: clip(err.Error(), maxReportText), Invalid: true}, failure.Invalid(err))
	}
	a.run.Store(run)
	defer run.Close()
	a.post(&fleetpb.AgentMessage{Body: &fleetpb.AgentMessage_Ready{Ready: &fleetpb.Ready{}}})
	a.logf("reached the scenario's servers; ready")

	watch := time.NewTicker(a.beat)
	defer watch.Stop()
	for {
		select {
		case f := <-finished:
			return a.finish(f)
		case err := <-recvErr:
			select {
			case f := <-finished:
				return a.finish(f)
			default:
			}
			return a.lost(fmt.Errorf("the connection ended: %w", err))
		case err := <-sendErr:
			return a.lost(fmt.Errorf("sending: %w", err))
		case <-watch.C:
			if silent := time.Duration(opts.Clock.Now() - a.heard.Load()); silent > missedBeats*a.beat {
				return a.lost(fmt.Errorf("no message for %s (heartbeat %s)", silent.Round(time.Millisecond), a.beat))
			}
		case <-ctx.Done():
			a.stopAll()
			return ctx.Err()
		}
	}
}

func (a *agent) logf(format string, args ...any) {
	fmt.Fprintf(a.opts.Log, "perfscen agent: "+format+"\n", args...)
}

// lost stops every session: an agent without its coordinator sends no
// load nobody measures.
func (a *agent) lost(why error) error {
	a.stopAll()
	err := failure.Env(fmt.Errorf("lost the coordinator at %s: %w; load stopped", a.opts.Coordinator, why))
	a.logf("%v", err)
	return err
}

// join reaches the coordinator (retrying until the join timeout), says
// Hello and reads the answer. A connection lost before the answer (the
// coordinator's door closes unproved connections to make room when
// strangers crowd it, and a stranger's flood on the agent's own host can
// close the agent's before its stream is read) is dialled again, until
// the join timeout.
func (a *agent) join(ctx context.Context, client fleetpb.FleetClient) (*fleetpb.Welcome, error) {
	jctx, jcancel := context.WithCancelCause(ctx)
	defer jcancel(nil)
	timeout := errors.New("join timeout")
	timer := time.AfterFunc(a.opts.JoinTimeout, func() { jcancel(timeout) })
	defer timer.Stop()
	pause := joinRetryFirst
	for {
		welcome, lost, err := a.joinOnce(ctx, jctx, timeout, client)
		if !lost {
			return welcome, err
		}
		select {
		case <-time.After(pause):
		case <-jctx.Done():
		}
		if context.Cause(jctx) == timeout {
			return nil, failure.Env(fmt.Errorf("could not join the coordinator at %s within %s: %w", a.opts.Coordinator, a.opts.JoinTimeout, err))
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		pause = min(2*pause, joinRetryMax)
	}
}

// The pause before dialling again after a connection lost while joining:
// short, since the loss is a crowd at the door, not a coordinator down
// (grpc's own backoff paces the dials of one that is).
const (
	joinRetryFirst = 20 * time.Millisecond
	joinRetryMax   = time.Second
)

// joinOnce is one attempt at joining; lost says the connection ended
// under the stream before the coordinator answered, worth another.
func (a *agent) joinOnce(ctx, jctx context.Context, timeout error, client fleetpb.FleetClient) (welcome *fleetpb.Welcome, lost bool, err error) {
	// The stream lives for the run: it takes ctx, not the join deadline,
	// once joined.
	streamCtx, streamCancel := context.WithCancel(withToken(ctx, a.opts.Token))
	attempt, attemptDone := context.WithCancel(jctx)
	defer attemptDone()
	go func() {
		select {
		case <-attempt.Done():
			if context.Cause(jctx) == timeout {
				streamCancel()
			}
		case <-a.tlsRefused:
			streamCancel()
		case <-ctx.Done():
		}
	}()
	stream, err := client.Join(streamCtx, grpc.WaitForReady(true))
	if err == nil {
		idx := int32(a.opts.Index)
		err = stream.Send(&fleetpb.AgentMessage{Body: &fleetpb.AgentMessage_Hello{Hello: &fleetpb.Hello{
			Name: a.opts.Name, Host: a.opts.Host, Index: idx, Version: a.opts.Version,
			Scenario: a.opts.Plan.Scenario, ScenarioHash: a.opts.Plan.ScenarioHash, DataHash: a.data, Overrides: a.opts.Plan.Overrides}}})
	}
	var first *fleetpb.CoordinatorMessage
	// io.EOF from Send: the coordinator ended the stream before reading
	// Hello (it checks the token first); its answer is still to be read.
	if err == nil || errors.Is(err, io.EOF) {
		first, err = stream.Recv()
	}
	if err != nil {
		streamCancel()
		select {
		case <-a.tlsRefused:
			return nil, false, failure.Invalid(fmt.Errorf("TLS with the coordinator at %s: %w", a.opts.Coordinator, a.tlsErr))
		default:
		}
		if context.Cause(jctx) == timeout {
			return nil, false, failure.Env(fmt.Errorf("could not reach the coordinator at %s within %s%s", a.opts.Coordinator, a.opts.JoinTimeout, a.probe(ctx)))
		}
		lost := status.Code(err) == codes.Unavailable && ctx.Err() == nil
		err = fmt.Errorf("joining the coordinator at %s: %w", a.opts.Coordinator, err)
		if lost {
			return nil, true, err
		}
		return nil, false, failure.Env(err)
	}
	if r := first.GetRefusal(); r != nil {
		streamCancel()
		err := fmt.Errorf("the coordinator at %s refused this agent: %s", a.opts.Coordinator, r.Reason)
		if r.Invalid {
			return nil, false, failure.Invalid(err)
		}
		return nil, false, failure.Env(err)
	}
	if welcome = first.GetWelcome(); welcome == nil {
		streamCancel()
		return nil, false, failure.Env(fmt.Errorf("the coordinator at %s answered Hello with %T", a.opts.Coordinator, first.Body))
	}
	a.stream = stream
	context.AfterFunc(ctx, streamCancel)
	return welcome, false, nil
}

// probe dials the coordinator once to say why it cannot be reached.
func (a *agent) probe(ctx context.Context) string {
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c, err := a.dial(pctx)
	if err != nil {
		return ": " + err.Error()
	}
	c.Close()
	return " (it accepts connections but did not answer as a perfscen coordinator)"
}

func (a *agent) post(msg *fleetpb.AgentMessage) {
	select {
	case a.send <- msg:
	case <-a.quit:
	}
}

// sender is the stream's only writer.
func (a *agent) sender() error {
	for {
		select {
		case msg := <-a.send:
			if err := a.stream.Send(msg); err != nil {
				return err
			}
		case <-a.quit:
			return a.stream.CloseSend()
		}
	}
}

// receive handles the coordinator's messages; a ping is answered at once
// with this host's clock.
func (a *agent) receive(ctx context.Context, finished chan<- *fleetpb.Finish) error {
	for {
		msg, err := a.stream.Recv()
		if err != nil {
			return err
		}
		now := a.opts.Clock.Now()
		a.heard.Store(now)
		switch b := msg.Body.(type) {
		case *fleetpb.CoordinatorMessage_Ping:
			a.post(&fleetpb.AgentMessage{Body: &fleetpb.AgentMessage_Pong{Pong: &fleetpb.Pong{
				Seq: b.Ping.Seq, EchoNs: b.Ping.SentNs, AgentNs: now}}})
		case *fleetpb.CoordinatorMessage_Start:
			a.start(ctx, b.Start)
		case *fleetpb.CoordinatorMessage_Stop:
			a.mu.Lock()
			if stop, ok := a.sessions[b.Stop.Id]; ok {
				close(stop)
				delete(a.sessions, b.Stop.Id)
			}
			a.mu.Unlock()
		case *fleetpb.CoordinatorMessage_Finish:
			finished <- b.Finish
			return nil
		}
	}
}

// start runs one session in its own goroutine and reports its windows
// and totals.
func (a *agent) start(ctx context.Context, st *fleetpb.StartSession) {
	run := a.run.Load()
	if run == nil {
		a.post(&fleetpb.AgentMessage{Body: &fleetpb.AgentMessage_Done{Done: &fleetpb.SessionDone{Session: st.Id, Error: "a session started before the agent was ready"}}})
		return
	}
	stop := make(chan struct{})
	a.mu.Lock()
	a.sessions[st.Id] = stop
	a.mu.Unlock()
	epoch := a.opts.Clock.Time(st.EpochNs)
	spec := engine.SessionSpec{ID: st.Id, Point: int(st.Point), Epoch: epoch, Warmup: time.Duration(st.WarmupNs),
		Window: time.Duration(st.WindowNs), Whole: st.Whole, Budget: st.Budget, Drain: time.Duration(st.DrainNs)}
	sh := engine.Shard{Index: a.index, Workers: int(st.Workers), WorkerBase: int(st.WorkerBase), WorkerTotal: int(st.WorkerTotal),
		MaxWorkers: int(st.MaxWorkers), Budget: st.Budget, Seed: st.Seed}
	if st.Rate {
		sh.Rate, sh.Phase = st.RequestRate, time.Duration(st.PhaseNs)
	}
	// Where the epoch lies on this host's true clock: with the injected
	// skew removed, what another host's log can be compared with.
	a.logf("session %d: point %d starts at %d on this host's clock (%d unskewed), %d worker(s)",
		st.Id, st.Point, st.EpochNs, epoch.UnixNano(), st.Workers)
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		t := run.Session(ctx, spec, sh, epoch, stop, func(r engine.WindowReport) {
			a.post(&fleetpb.AgentMessage{Body: &fleetpb.AgentMessage_Window{Window: reportOf(st.Id, r)}})
		})
		a.mu.Lock()
		delete(a.sessions, st.Id)
		a.mu.Unlock()
		a.post(&fleetpb.AgentMessage{Body: &fleetpb.AgentMessage_Done{Done: doneOf(st.Id, t)}})
	}()
}

// stopAll stops every session and the sender, and waits for the
// sessions: nothing more is sent once the run is over or lost.
func (a *agent) stopAll() {
	a.mu.Lock()
	for id, stop := range a.sessions {
		close(stop)
		delete(a.sessions, id)
	}
	a.mu.Unlock()
	a.once.Do(func() { close(a.quit) })
	a.wg.Wait()
}

func reportOf(session uint64, r engine.WindowReport) *fleetpb.WindowReport {
	return &fleetpb.WindowReport{Session: session, Index: int32(r.Index), StartNs: int64(r.Start), EndNs: int64(r.End),
		Requests: r.Requests, Errors: r.Errors, Unreachable: r.Unreachable, SumUs: r.SumUs, MeanUs: r.MeanUs, M2: r.M2,
		MinNs: int64(r.MinLatency), MaxNs: int64(r.MaxLatency), SendRecvNs: int64(r.SendRecv), WaitNs: int64(r.Wait),
		Decoupled: r.Decoupled, Responses: r.Responses, FirstN: r.FirstN, FirstSumUs: r.FirstSumUs, Histogram: r.Histogram,
		Classes: classesOut(r.Classes), Sequences: r.Sequences, Delayed: r.Delayed}
}

// classesOut, as every text an agent reports, clips to maxReportText,
// so that a report fits in maxAgentMessage however long a server's
// error messages are.
func classesOut(cs []result.ErrorClass) []*fleetpb.ErrorClass {
	var out []*fleetpb.ErrorClass
	for _, c := range cs {
		out = append(out, &fleetpb.ErrorClass{Class: clip(c.Class, maxReportText), Count: c.Count, Example: clip(c.Example, maxReportText)})
	}
	return out
}

// finish ends the agent's part as the coordinator said: done when the run
// ended (exit 0), or failed with the coordinator's exit code when it gave
// up before the run started, so a Job of agents does not read Complete.
func (a *agent) finish(f *fleetpb.Finish) error {
	a.stopAll()
	if f.GetExitCode() == 0 {
		a.logf("the coordinator finished the run: %s", f.GetReason())
		return nil
	}
	err := fmt.Errorf("the coordinator gave up (exit %d): %s", f.GetExitCode(), f.GetReason())
	if f.GetExitCode() == 2 {
		return failure.Invalid(err)
	}
	return failure.Env(err)
}

func doneOf(session uint64, t engine.Totals) *fleetpb.SessionDone {
	d := &fleetpb.SessionDone{Session: session, ErrorsTotal: t.ErrorsTotal, MismatchesTotal: t.MismatchesTotal,
		Checked: t.Checked, Late: t.Late, Dropped: t.Dropped, Error: clip(t.Err, maxReportText), Classes: classesOut(t.Classes)}
	for _, e := range t.Errors {
		d.Errors = append(d.Errors, &fleetpb.Tally{Message: clip(e.Message, maxReportText), Count: e.Count})
	}
	for _, e := range t.Mismatches {
		d.Mismatches = append(d.Mismatches, &fleetpb.Tally{Message: clip(e.Message, maxReportText), Count: e.Count})
	}
	return d
}
