package fleet

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"os"
	"strings"

	"google.golang.org/grpc/metadata"
)

// TokenEnv is the environment variable holding the shared agent token when
// no token file is given.
const TokenEnv = "PERFSCEN_AGENT_TOKEN"

// LoadToken reads the shared token agents prove themselves with: the file
// (a mounted Kubernetes Secret, a CI secret written to disk), else
// $PERFSCEN_AGENT_TOKEN. Surrounding white space is not part of it. An
// empty result is not an error here: the coordinator refuses to start
// without a token, an agent without one is refused by name.
func LoadToken(file string, getenv func(string) string) (string, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("--token-file: %w", err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	return strings.TrimSpace(getenv(TokenEnv)), nil
}

// authKey is the metadata key the token travels under.
const authKey = "authorization"

// withToken adds the token to an outgoing stream's metadata.
func withToken(ctx context.Context, token string) context.Context {
	if token == "" {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, authKey, "Bearer "+token)
}

var (
	errNoToken  = errors.New("no token (set " + TokenEnv + " or --token-file)")
	errBadToken = errors.New("wrong token")
)

// checkToken compares the stream's token with want in constant time (of
// their digests, so neither length nor content leaks through timing).
func checkToken(ctx context.Context, want string) error {
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get(authKey)
	if len(vals) == 0 {
		return errNoToken
	}
	got, ok := strings.CutPrefix(vals[0], "Bearer ")
	if !ok || got == "" {
		return errNoToken
	}
	a, b := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	if subtle.ConstantTimeCompare(a[:], b[:]) != 1 {
		return errBadToken
	}
	return nil
}
