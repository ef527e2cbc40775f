package grpc

import (
	"context"
	"errors"
	"fmt"
	"github.com/perfscen/perfscen/internal/transport"
	"github.com/perfscen/perfscen/runner/plan"
	"google.golang.org/grpc/codes"
	"io"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/kinds"
)

// What a request is, and its latency, for each shape of method:
//
//   - unary: one call; latency runs from sending the message to the
//     reply (with its status).
//   - server streaming: one call, which completes at the end of the
//     stream (the status after the last reply): latency runs to there,
//     and, as for Triton's decoupled models, the time to the first reply
//     and the number of replies are recorded (first_response_avg_us,
//     responses, response_throughput).
//   - client streaming: one call sending every message of the entry (or
//     of a framed file) and then closing its side; latency runs to the
//     reply.
//   - bidi streaming: as client streaming, while the replies are read as
//     they come; latency runs to the end of the server's stream, with the
//     first reply and the count recorded as for server streaming.
//
// client_send_recv is the time to open the call and send its messages;
// client_wait the rest, until the call completed.

// point is one plan point's load on a model.
type point struct {
	srv *server
	m   *model
}

func (p *point) Data() *inputdata.Data { return p.m.data }

// Stats: a gRPC service offers no statistics; latency is the client's.
func (p *point) Stats(context.Context) (kinds.Counters, error) {
	return kinds.Counters{}, kinds.ErrNoStats
}

func (p *point) Close() error { return nil }

func (p *point) NewCaller(_ context.Context, worker int) (kinds.Caller, error) {
	conn, err := p.srv.pool.get(worker)
	if err != nil {
		return nil, err
	}
	md := p.m.md
	return &caller{
		conn:       conn,
		m:          p.m,
		md:         p.srv.md,
		deadline:   p.srv.cfg.deadline,
		maxReplies: p.srv.cfg.replies,
		desc:       &grpc.StreamDesc{ServerStreams: md.IsStreamingServer(), ClientStreams: md.IsStreamingClient()},
		path:       p.m.method.path(),
		opts:       []grpc.CallOption{grpc.ForceCodecV2(rawCodec{})},
	}, nil
}

// caller sends one worker's calls.
type caller struct {
	conn     grpcConn
	m        *model
	md       metadata.MD
	deadline time.Duration
	// maxReplies ends a streamed reply after this many (0: the server
	// ends it).
	maxReplies int
	desc       *grpc.StreamDesc
	path       string
	opts       []grpc.CallOption
	send       frame
	replies    [][]byte
}

func (c *caller) Close() error { return nil }

func (c *caller) Call(ctx context.Context, clock func() time.Duration, r *kinds.Request, out *kinds.Outcome) {
	msgs := r.Step.Inputs
	if len(msgs) == 0 {
		out.Err = fmt.Errorf("call %s: no message to send", r.Step.Origin)
		return
	}
	if len(c.md) > 0 {
		ctx = metadata.NewOutgoingContext(ctx, c.md)
	}
	ctx, cancel := context.WithTimeout(ctx, c.deadline)
	defer cancel()
	check := r.Check && r.Index < len(c.m.expects) && c.m.expects[r.Index] != nil
	c.replies = c.replies[:0]

	out.Sent = clock()
	st, err := c.conn.NewStream(ctx, c.desc, c.path, c.opts...)
	if err != nil {
		out.Done = clock()
		out.Err = callError(ctx, c.path, err)
		return
	}
	var sentAt time.Duration
	var sendDone chan time.Duration
	if c.desc.ClientStreams {
		// The server may reply while messages are still going out; a
		// sender of its own keeps both directions moving, as a client
		// of a bidi method must.
		sendDone = make(chan time.Duration, 1)
		go func() {
			var f frame
			for _, m := range msgs {
				f.b = m.Raw
				if st.SendMsg(&f) != nil {
					break // the call ended; RecvMsg has its status
				}
			}
			_ = st.CloseSend()
			sendDone <- clock()
		}()
	} else {
		c.send.b = msgs[0].Raw
		if err := st.SendMsg(&c.send); err == nil {
			_ = st.CloseSend()
		}
		sentAt = clock()
	}

	streaming := c.desc.ServerStreams
	var callErr error
	for {
		var f frame
		err := st.RecvMsg(&f)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			callErr = err
			break
		}
		if streaming {
			if out.Responses == 0 {
				out.First = clock()
			}
			out.Responses++
		}
		if check {
			c.replies = append(c.replies, f.b)
		}
		if !streaming {
			break // grpc-go has read the status with the one reply
		}
		if c.maxReplies > 0 && int(out.Responses) >= c.maxReplies {
			cancel() // the call is complete: end the stream the server keeps open
			break
		}
	}
	out.Done = clock()
	if sendDone != nil {
		sentAt = <-sendDone
	}
	sentAt = min(max(sentAt, out.Sent), out.Done)
	out.SendRecv = sentAt - out.Sent
	out.Wait = out.Done - sentAt
	out.Decoupled = streaming
	if callErr != nil {
		out.Err = callError(ctx, c.path, callErr)
		var se *transport.ServerError
		if streaming && out.Responses > 0 && errors.As(out.Err, &se) && se.GRPCCode == codes.DeadlineExceeded {
			// The server replied and kept the stream open: say so, not
			// that the server failed to answer.
			msg := fmt.Sprintf("deadline exceeded: the server sent %d replies and did not end the stream within the deadline (%s); a stream it never ends needs server.grpc.replies to end each call after that many replies", out.Responses, c.deadline)
			if c.maxReplies > 0 {
				msg = fmt.Sprintf("deadline exceeded: the server sent %d of the %d replies server.grpc.replies waits for, and did not end the stream, within the deadline (%s)", out.Responses, c.maxReplies, c.deadline)
			}
			out.Err = &transport.ServerError{Protocol: plan.ProtocolGRPC, Op: c.path, GRPCCode: codes.DeadlineExceeded, Message: msg}
		}
		return
	}
	if check {
		out.Checked = true
		out.Mismatch = c.m.expects[r.Index].check(c.m.md.Output(), c.replies, streaming, c.m.tol)
	}
}
