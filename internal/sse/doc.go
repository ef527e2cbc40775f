// Package sse reads Server-Sent Events (text/event-stream) as the WHATWG
// HTML standard defines them: any line ending (CRLF, LF, CR), comments,
// multi-line data, a leading byte-order mark. It knows nothing of OpenAI;
// the [DONE] sentinel and error payloads are the caller's business.
package sse
