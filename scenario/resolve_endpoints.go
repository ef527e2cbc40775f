package scenario

import "github.com/perfscen/perfscen/runner/plan"

// resolveEndpoints checks that every protocol the points use has somewhere
// to go on every server: url serves both, http_url and grpc_url one each.
// A real server listens on one port per protocol, so a protocol sweep
// against it needs the per-protocol keys.
func resolveEndpoints(s *Scenario, c *collector, r *resolved) {
	if len(s.Servers) == 0 {
		serverEndpoints(s.Server, path{"server"}, c, r)
		return
	}
	for _, srv := range r.servers {
		serverEndpoints(s.Servers[srv.Name], path{"servers", srv.Name}, c, r)
	}
}

func serverEndpoints(in Server, p path, c *collector, r *resolved) {
	if in.Embedded || in.URL != "" || (in.HTTPURL == "" && in.GRPCURL == "") {
		return // resolveServer reports the missing or misplaced url
	}
	given := map[plan.Protocol]bool{plan.ProtocolHTTP: in.HTTPURL != "", plan.ProtocolGRPC: in.GRPCURL != ""}
	for _, proto := range r.protocols() {
		if given[proto] {
			continue
		}
		where := p.String() + ".protocol is " + string(proto)
		if len(r.sweep.protocol) > 0 {
			where = "sweep.protocol includes " + string(proto)
		}
		c.at(p, "missing `%s_url` (or `url`): %s", proto, where)
	}
}
