package llmsim

import "net/http"

// stream writes the generation as server-sent events the way vLLM does:
// (chat) a role chunk, one chunk per chunk_tokens tokens, a chunk with the
// finish reason, the usage chunk when asked, then [DONE].
func (g *gen) stream(r *http.Request, e *engine) {
	h := g.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	g.w.WriteHeader(http.StatusOK)
	fl, _ := g.w.(http.Flusher)
	flush := func() {
		if fl != nil {
			fl.Flush()
		}
	}
	if g.chat {
		g.event(func(b []byte) []byte {
			return append(b, `"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]`...)
		})
		flush()
	}
	sent := 0
	for {
		done := g.sq.finished.Load()
		n := int(g.sq.emitted.Load())
		if g.sq.failed.Load() {
			n-- // the failing step produced no token
		}
		pending := n - sent
		for pending >= g.chunk || (done && pending > 0) {
			k := min(pending, g.chunk)
			g.content(sent, k)
			sent += k
			pending -= k
		}
		if n > 0 {
			flush()
		}
		if done {
			break
		}
		if err := g.wait(r, e); err != nil {
			if err != errDisconnected {
				g.buf = append(g.buf[:0], `data: {"error":{"message":"server shutting down","type":"ServiceUnavailableError","code":503}}`+"\n\n"...)
				_, _ = g.w.Write(g.buf)
			}
			return
		}
	}
	if g.sq.failed.Load() {
		// vLLM reports a failure after the headers as a data event holding
		// an error object.
		g.buf = append(g.buf[:0], `data: {"error":{"message":"injected engine failure during decode","type":"InternalServerError","code":500}}`+"\n\n"...)
		_, _ = g.w.Write(g.buf)
		flush()
		return
	}
	g.event(func(b []byte) []byte {
		if g.chat {
			b = append(b, `"choices":[{"index":0,"delta":{},"finish_reason":"`...)
		} else {
			b = append(b, `"choices":[{"index":0,"text":"","finish_reason":"`...)
		}
		return append(append(b, g.reason...), `"}]`...)
	})
	if g.includeUsage {
		g.event(func(b []byte) []byte { return g.appendUsage(append(b, `"choices":[],`...)) })
	}
	_, _ = g.w.Write([]byte("data: [DONE]\n\n"))
	flush()
}

// event writes one data event whose JSON object body follows the header.
func (g *gen) event(body func([]byte) []byte) {
	b := append(g.buf[:0], "data: "...)
	b = g.head(b, true)
	b = body(b)
	b = append(b, "}\n\n"...)
	g.buf = b
	_, _ = g.w.Write(b)
}

// content writes tokens [from, from+k) as one chunk.
func (g *gen) content(from, k int) {
	g.event(func(b []byte) []byte {
		if g.chat {
			b = append(b, `"choices":[{"index":0,"delta":{"content":"`...)
		} else {
			b = append(b, `"choices":[{"index":0,"text":"`...)
		}
		for i := from; i < from+k; i++ {
			b = append(b, tokenText(g.hash, i)...) // plain ASCII words: no escaping needed
		}
		b = append(b, '"')
		if g.chat {
			b = append(b, '}')
		}
		return append(b, `,"finish_reason":null}]`...)
	})
}
