package scenario

// resolveEndpoints checks that every protocol the points use has somewhere
// to go: url serves both, http_url and grpc_url one each. A real server
// listens on one port per protocol, so a protocol sweep against it needs
// the per-protocol keys.
func resolveEndpoints(s *Scenario, c *collector, r *resolved) {
	in := s.Server
	if in.Embedded || in.URL != "" || (in.HTTPURL == "" && in.GRPCURL == "") {
		return // resolveServer reports the missing or misplaced url
	}
	given := map[string]bool{"http": in.HTTPURL != "", "grpc": in.GRPCURL != ""}
	for _, proto := range r.protocols() {
		if given[proto] {
			continue
		}
		where := "server.protocol is " + proto
		if len(r.sweep.protocol) > 0 {
			where = "sweep.protocol includes " + proto
		}
		c.at(path{"server"}, "missing `%s_url` (or `url`): %s", proto, where)
	}
}
