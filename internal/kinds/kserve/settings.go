package kserve

import (
	"fmt"
	"time"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/runner/plan"
)

// settings are the server.kserve block.
type settings struct {
	// GRPCCompression is none, gzip or deflate.
	GRPCCompression string `json:"grpc_compression"`
	// Connections is how many connections all workers share; 0 gives
	// each worker its own. Sharing moves the requests onto the library
	// clients (net/http's pool, grpc-go's multiplexed channels), which a
	// server whose front end costs more per connection may prefer.
	Connections int `json:"connections"`
	// BusyPoll is a duration: how long a worker's own connection polls
	// for a reply before it sleeps; "" or 0 never polls.
	BusyPoll string `json:"busy_poll"`
	busyPoll time.Duration
}

// maxBusyPoll bounds busy_poll: polling is for replies that come within
// microseconds; longer waits are the kernel's to sleep through.
const maxBusyPoll = 10 * time.Millisecond

// readSettings decodes srv's server.kserve block.
func readSettings(srv plan.Server) (settings, error) {
	var s settings
	if err := kinds.DecodeOptions(srv, &s); err != nil {
		return s, err
	}
	// The schema refuses these too; a plan built in code skips it.
	if s.Connections < 0 {
		return s, failure.Invalid(fmt.Errorf("%s.connections: %d is negative (0 gives each worker its own connection)", kinds.OptionsField(srv), s.Connections))
	}
	if s.BusyPoll != "" {
		d, err := time.ParseDuration(s.BusyPoll)
		if err != nil || d < 0 || d > maxBusyPoll {
			return s, failure.Invalid(fmt.Errorf("%s.busy_poll: %q is not a duration from 0 to %s", kinds.OptionsField(srv), s.BusyPoll, maxBusyPoll))
		}
		s.busyPoll = d
	}
	return s, nil
}

// grpcCompression is the compressor gRPC requests go through; "" for
// none.
func (s settings) grpcCompression() string {
	if s.GRPCCompression == "none" {
		return ""
	}
	return s.GRPCCompression
}
