package refserver

// Triton accepts gzip and deflate message compression; the compressors
// live with the clients' transport, which registers both with grpc-go.
import _ "github.com/perfscen/perfscen/internal/transport"
