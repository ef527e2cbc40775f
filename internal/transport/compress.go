package transport

import (
	"compress/zlib"
	"io"
	"sync"

	"google.golang.org/grpc/encoding"
	// Registers grpc-go's gzip compressor.
	_ "google.golang.org/grpc/encoding/gzip"
)

// Triton accepts gzip and deflate message compression (perf_analyzer's
// --grpc-compression-algorithm), and so do perfscen's clients (sending)
// and its reference server (both ways). grpc-go ships gzip only; deflate
// in gRPC is the zlib format (RFC 1950), as gRPC's C core writes it.
func init() { encoding.RegisterCompressor(deflateCompressor{}) }

type deflateCompressor struct{}

var zlibWriters = sync.Pool{New: func() any { return zlib.NewWriter(nil) }}

func (deflateCompressor) Name() string { return "deflate" }

func (deflateCompressor) Compress(w io.Writer) (io.WriteCloser, error) {
	z := zlibWriters.Get().(*zlib.Writer)
	z.Reset(w)
	return &pooledZlibWriter{Writer: z}, nil
}

func (deflateCompressor) Decompress(r io.Reader) (io.Reader, error) {
	return zlib.NewReader(r)
}

type pooledZlibWriter struct{ *zlib.Writer }

func (p *pooledZlibWriter) Close() error {
	defer zlibWriters.Put(p.Writer)
	return p.Writer.Close()
}
