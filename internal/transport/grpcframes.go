package transport

import (
	"encoding/binary"
	"errors"
	"io"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// await reads frames until the stream is done.
func (gc *GRPCConn) await() error {
	for !gc.st.done {
		if err := gc.readFrame(); err != nil {
			return err
		}
	}
	return nil
}

// readFrame reads and handles one frame. WINDOW_UPDATEs are written at
// once, since the server may be waiting for them; PING and SETTINGS
// acknowledgements go out with the next request instead. grpc-go servers
// ping on every request they receive (bandwidth-delay estimation), and an
// immediate acknowledgement was one write(2) per request more.
func (gc *GRPCConn) readFrame() error {
	if err := gc.readOwnData(); err != errNotOwnData {
		if err == nil && gc.urgent {
			gc.urgent = false
			return gc.flush()
		}
		return err
	}
	f, err := gc.fr.ReadFrame()
	if err != nil {
		return err
	}
	if err := gc.handle(f); err != nil {
		return err
	}
	if gc.urgent {
		gc.urgent = false
		return gc.flush()
	}
	return nil
}

func (gc *GRPCConn) handle(f http2.Frame) error {
	st := &gc.st
	mine := f.Header().StreamID == st.id && !st.done
	st.seen = st.seen || mine
	switch f := f.(type) {
	case *http2.DataFrame:
		if mine {
			st.data(f.Data())
		}
		gc.received(f.Header().Length, mine, f.StreamEnded())
	case *http2.HeadersFrame:
		if mine && st.first.IsZero() {
			// The reply begins here: a window update or a ping before
			// it is the server reading the request, not answering it.
			st.first = time.Now()
		}
		gc.hb = headerBlock{stream: f.StreamID, endStream: f.StreamEnded(), fields: gc.hb.fields[:0]}
		return gc.headerFragment(f.HeaderBlockFragment(), f.HeadersEnded(), mine)
	case *http2.ContinuationFrame: // the Framer checks it continues the block
		return gc.headerFragment(f.HeaderBlockFragment(), f.HeadersEnded(), mine)
	case *http2.RSTStreamFrame:
		if mine {
			code := f.ErrCode
			st.rst, st.done = &code, true
			st.refused = code == http2.ErrCodeRefusedStream
		}
	case *http2.SettingsFrame:
		return gc.settings(f)
	case *http2.PingFrame:
		if !f.IsAck() {
			gc.fr.WritePing(true, f.Data)
		}
	case *http2.GoAwayFrame:
		gc.closing, gc.goAway = true, true
		if st.id > f.LastStreamID && !st.done {
			st.done, st.refused = true, true
		}
	case *http2.WindowUpdateFrame:
		switch {
		case f.StreamID == 0:
			gc.connSendWindow += int64(f.Increment)
		case mine:
			st.sendWindow += int64(f.Increment)
		}
	case *http2.PushPromiseFrame:
		return http2.ConnectionError(http2.ErrCodeProtocol)
	}
	return nil
}

// maxHeaderList bounds a reply's decoded header list, as x/net/http2's
// default does.
const maxHeaderList = 16 << 20

// headerBlock is the header list being decoded from HEADERS and its
// CONTINUATIONs. Every block is decoded, whatever its stream: the HPACK
// table is the connection's.
type headerBlock struct {
	stream    uint32
	endStream bool
	fields    []hpack.HeaderField
	size      uint32
	truncated bool
	invalid   bool // a pseudo-header a response may not carry, or one after a regular field
	regular   bool
}

// emit collects one decoded field. It is the decoder's callback for the
// connection's life (x/net/http2's MetaHeadersFrame reading would cost
// several allocations per frame).
func (gc *GRPCConn) emit(f hpack.HeaderField) {
	hb := &gc.hb
	if hb.truncated {
		return
	}
	if hb.size += f.Size(); hb.size > maxHeaderList {
		hb.truncated = true
		return
	}
	if len(f.Name) > 0 && f.Name[0] == ':' {
		hb.invalid = hb.invalid || hb.regular || f.Name != ":status"
	} else {
		hb.regular = true
	}
	hb.fields = append(hb.fields, f)
}

func (gc *GRPCConn) headerFragment(frag []byte, end, mine bool) error {
	if _, err := gc.hdec.Write(frag); err != nil {
		return http2.ConnectionError(http2.ErrCodeCompression)
	}
	gc.hbOpen = !end
	if !end {
		return nil
	}
	if err := gc.hdec.Close(); err != nil {
		return http2.ConnectionError(http2.ErrCodeCompression)
	}
	if mine {
		gc.st.header(&gc.hb)
	}
	return nil
}

// settings applies the server's SETTINGS and acknowledges them.
func (gc *GRPCConn) settings(f *http2.SettingsFrame) error {
	if f.IsAck() {
		return nil
	}
	err := f.ForeachSetting(func(s http2.Setting) error {
		if err := s.Valid(); err != nil {
			return err
		}
		switch s.ID {
		case http2.SettingInitialWindowSize:
			delta := int64(s.Val) - gc.peerWindow
			gc.peerWindow = int64(s.Val)
			gc.st.sendWindow += delta
		case http2.SettingMaxFrameSize:
			gc.peerMaxFrame = int(s.Val)
		case http2.SettingHeaderTableSize:
			gc.enc.SetMaxDynamicTableSizeLimit(s.Val)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return gc.fr.WriteSettingsAck()
}

// received accounts for n bytes of DATA (padding included, as the windows
// count it), returning them to the server in WINDOW_UPDATEs once a
// quarter of a window is spent, and ends the stream at END_STREAM.
func (gc *GRPCConn) received(n uint32, mine, end bool) {
	gc.connUnacked += n
	if gc.connUnacked >= GRPCWindow/4 {
		gc.fr.WriteWindowUpdate(0, gc.connUnacked)
		gc.connUnacked, gc.urgent = 0, true
	}
	if !mine {
		return
	}
	st := &gc.st
	st.unacked += n
	if end {
		st.end()
	} else if st.unacked >= GRPCWindow/4 {
		gc.fr.WriteWindowUpdate(st.id, st.unacked)
		st.unacked, gc.urgent = 0, true
	}
}

// errNotOwnData says the next frame is not a DATA frame readOwnData
// takes: the Framer reads it.
var errNotOwnData = errors.New("not the stream's DATA")

// ownDataMax is the largest frame this client accepts, advertised in its
// SETTINGS: a server that honours it (Triton does) sends a 4.9 MB reply in
// five DATA frames rather than three hundred, each read mostly straight
// from the socket into the reply buffer.
const ownDataMax = 1 << 20

// readOwnData reads a DATA frame of the call's stream straight into the
// reply message, sparing the copy through the Framer's buffer (a reply's
// whole size, per reply). Other frames, and DATA inside a header block
// (a protocol error the Framer reports), are left to the Framer.
func (gc *GRPCConn) readOwnData() error {
	st := &gc.st
	if gc.hbOpen || st.done {
		return errNotOwnData
	}
	hdr, err := gc.br.Peek(9)
	if err != nil || http2.FrameType(hdr[3]) != http2.FrameData {
		return errNotOwnData
	}
	length := int(hdr[0])<<16 | int(hdr[1])<<8 | int(hdr[2])
	flags := http2.Flags(hdr[4])
	sid := binary.BigEndian.Uint32(hdr[5:]) & (1<<31 - 1)
	if sid != st.id || length > ownDataMax {
		return errNotOwnData
	}
	gc.br.Discard(9)
	n, pad := length, 0
	if flags.Has(http2.FlagDataPadded) {
		if length == 0 {
			return http2.ConnectionError(http2.ErrCodeProtocol)
		}
		b, err := gc.br.ReadByte()
		if err != nil {
			return err
		}
		pad, n = int(b), length-1-int(b)
		if n < 0 {
			return http2.ConnectionError(http2.ErrCodeProtocol)
		}
	}
	st.seen = true
	if dst := st.room(n); dst != nil {
		if _, err := io.ReadFull(gc.br, dst); err != nil {
			return err
		}
		st.took()
	} else if _, err := gc.br.Discard(n); err != nil {
		return err
	}
	if _, err := gc.br.Discard(pad); err != nil {
		return err
	}
	gc.received(uint32(length), true, flags.Has(http2.FlagDataEndStream))
	return nil
}
