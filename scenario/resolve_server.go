package scenario

import (
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/schemas"
)

var envRE = regexp.MustCompile(`\$\{([^}]*)\}`)
var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// serverNameRE is what a key of servers may be: it prefixes model names
// (server/model) and --model-param keys (server/model.key=value).
var serverNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// resolveServers resolves server, or every entry of servers. With servers
// the returned single server only carries the protocol every point uses;
// the named ones, sorted by name, are what the plan holds.
func resolveServers(s *Scenario, c *collector, getenv func(string) string, dir string) (plan.Server, []plan.Server) {
	if len(s.Servers) == 0 {
		return resolveServer(s.Server, path{"server"}, c, getenv, dir), nil
	}
	if c.hasKey("server") {
		c.atKey(path{"servers"}, "give either server (one server) or servers (several, by name), not both")
	}
	names := make([]string, 0, len(s.Servers))
	for name := range s.Servers {
		names = append(names, name)
	}
	sort.Strings(names)
	var out []plan.Server
	var proto plan.Protocol
	var protoFrom string
	var firstKind, kindFrom string
	allGRPC := true
	for _, name := range names {
		p := path{"servers", name}
		if !serverNameRE.MatchString(name) {
			c.atKey(p, "server name %q must start with a letter or _ and hold only letters, digits, _ and - (it prefixes model names: %s/model)", name, name)
		}
		in := s.Servers[name]
		srv := resolveServer(in, p, c, getenv, dir)
		srv.Name = name
		// Servers of different kinds may be compared (the same model
		// under TF Serving and under Triton): requests, latency and
		// throughput mean the same for every inference kind. An LLM
		// endpoint's figures (TTFT, tokens/s) have no counterpart in the
		// others, and the run's LLM settings (llm:) apply to every server
		// alike, so openai servers go with openai servers only.
		kind := in.Kind
		if kind == "" {
			kind = plan.KindKServe
		}
		if kindFrom == "" {
			firstKind, kindFrom = kind, name
		} else if (kind == plan.KindOpenAI) != (firstKind == plan.KindOpenAI) {
			c.at(p.child("kind"), "is %s but servers.%s is kind %s; an openai server's figures (TTFT, tokens/s) have no counterpart in other kinds, so openai servers are compared with openai servers only", kind, kindFrom, firstKind)
		}
		if in.Kind == plan.KindOpenAI {
			srv.Kind = plan.KindOpenAI
		}
		for _, k := range []struct {
			key string
			set bool
		}{{"endpoint", in.Endpoint != ""}, {"api_key_env", in.APIKeyEnv != ""}} {
			if k.set && in.Kind != plan.KindOpenAI {
				c.atKey(p.child(k.key), "applies only with kind: openai")
			}
		}
		// Arms on two servers are paired at equal coordinates, protocol
		// included, so every server must default to the same protocol.
		if in.Protocol != "" {
			if proto != "" && plan.Protocol(in.Protocol) != proto {
				c.at(p.child("protocol"), "is %s but servers.%s.protocol is %s; compared arms are paired at equal coordinates, so give every server the same protocol (or sweep protocol)", in.Protocol, protoFrom, proto)
			}
			if proto == "" {
				proto, protoFrom = plan.Protocol(in.Protocol), name
			}
		}
		out = append(out, srv)
		allGRPC = allGRPC && kindFacts(in.Kind).Protocol == string(plan.ProtocolGRPC)
	}
	if proto == "" {
		proto = plan.ProtocolHTTP
		if allGRPC {
			proto = plan.ProtocolGRPC
		}
	}
	for i := range out {
		out[i].Protocol = proto
	}
	return plan.Server{Protocol: proto}, out
}

// kindFacts are what the scenario knows of a server kind (the protocol
// its points default to, whether it needs a url), generated from the kinds
// themselves (schemas/kinds_gen.go). A kind the schema refuses, or none,
// reads as the default kind, kserve.
func kindFacts(kind string) schemas.Kind {
	if k, ok := schemas.KindNamed(kind); ok {
		return k
	}
	k, _ := schemas.KindNamed(plan.KindKServe)
	return k
}

func resolveServer(in Server, p path, c *collector, getenv func(string) string, dir string) plan.Server {
	out := plan.Server{
		URL:            in.URL,
		Protocol:       plan.Protocol(in.Protocol),
		Embedded:       in.Embedded,
		Timeout:        DefaultTimeout,
		MetricsURL:     in.MetricsURL,
		EmbeddedModels: in.EmbeddedModels,
		TensorFormat:   plan.TensorFormat(in.TensorFormat),
		HTTPURL:        in.HTTPURL,
		GRPCURL:        in.GRPCURL,
		EmbeddedFlavor: in.EmbeddedFlavor,
	}
	if out.TensorFormat == "" {
		out.TensorFormat = plan.TensorAuto
	}
	if pr := in.Process; pr != nil {
		out.Process = plan.ServerProcess{Off: pr.Off, PID: pr.PID, PIDFile: pr.PIDFile, Cgroup: pr.Cgroup, Where: c.whereKey(p.child("process"))}
		if pr.PIDFile != "" && !filepath.IsAbs(pr.PIDFile) {
			out.Process.PIDFile = filepath.Join(dir, pr.PIDFile)
		}
		if in.Embedded && !pr.Off {
			c.at(p.child("process"), "names a process, but the embedded server runs inside perfscen and accounts its own model threads; leave it out (or off: true)")
		}
	}
	for name := range in.EmbeddedModels {
		if out.ParamsWhere == nil {
			out.ParamsWhere = map[string]string{}
		}
		out.ParamsWhere[name] = c.whereKey(p.child("embedded_models", name))
	}
	kind := in.Kind
	if kind == "" {
		kind = plan.KindKServe
	}
	for _, k := range slices.Sorted(maps.Keys(in.KindBlocks)) {
		if k != kind {
			c.atKey(p.child(k), "applies only with kind: %s", k)
			continue
		}
		if block, ok := in.KindBlocks[k].(map[string]any); ok {
			out.Options = block
			whereAll(c, p, path{k}, block, &out)
		}
	}
	if in.Kind != "" && in.Kind != plan.KindKServe && in.Kind != plan.KindOpenAI {
		out.Kind = in.Kind
	}
	if out.Protocol == "" {
		out.Protocol = plan.Protocol(kindFacts(in.Kind).Protocol)
	}
	for _, u := range []struct{ key, v string }{{"url", in.URL}, {"http_url", in.HTTPURL}, {"grpc_url", in.GRPCURL}} {
		if in.Embedded && u.v != "" {
			c.at(p.child(u.key), "must be absent with embedded: true (the embedded server picks its own loopback address)")
		}
	}
	if !in.Embedded && in.URL == "" && in.HTTPURL == "" && in.GRPCURL == "" && !kindFacts(in.Kind).InProcess {
		c.at(p, "missing `url` (or http_url/grpc_url, or set embedded: true to use the built-in reference server)")
	}
	if in.EmbeddedFlavor != "" && !in.Embedded {
		c.atKey(p.child("embedded_flavor"), "applies only with embedded: true")
	}
	if len(in.EmbeddedModels) > 0 && !in.Embedded {
		c.atKey(p.child("embedded_models"), "applies only with embedded: true")
	}
	if in.Timeout != "" {
		d, err := ParseDuration(in.Timeout)
		if err != nil {
			c.at(p.child("timeout"), "%v", err)
		} else if d <= 0 {
			c.at(p.child("timeout"), "must be > 0")
		} else {
			out.Timeout = d
		}
	}
	out.Headers, out.Secret = resolveHeaders(in.Headers, c, p.child("headers"), getenv)
	if in.TLS != nil || strings.HasPrefix(in.URL, "https://") || strings.HasPrefix(in.HTTPURL, "https://") || strings.HasPrefix(in.GRPCURL, "grpcs://") {
		if in.Embedded {
			c.atKey(p.child("tls"), "does not apply to the embedded server, which listens in plain text on loopback")
		}
		out.TLS.Enabled = true
	}
	if t := in.TLS; t != nil {
		if (t.CertFile == "") != (t.KeyFile == "") {
			c.at(p.child("tls"), "cert_file and key_file go together (client certificate and its key)")
		}
		out.TLS.CAFile = rel(dir, t.CAFile)
		out.TLS.CertFile = rel(dir, t.CertFile)
		out.TLS.KeyFile = rel(dir, t.KeyFile)
		// The files are read when the server is opened (and by perfscen
		// validate): errors about them name these lines.
		setWhere(&out, "tls", c.whereKey(p.child("tls")))
		for _, key := range []string{"ca_file", "cert_file", "key_file"} {
			setWhere(&out, "tls."+key, c.where(p.child("tls", key)))
		}
		out.TLS.ServerName = t.ServerName
		out.TLS.Insecure = t.InsecureSkipVerify
	}
	return out
}

// resolveHeaders replaces ${VAR} with the environment; a header that used a
// variable is secret, so reports and result files never show it.
func resolveHeaders(in map[string]string, c *collector, p path, getenv func(string) string) (map[string]string, []string) {
	if len(in) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(in))
	var secret []string
	names := make([]string, 0, len(in))
	for k := range in {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v := in[k]
		if strings.Count(v, "${") != len(envRE.FindAllString(v, -1)) {
			c.at(p.child(k), "unterminated ${ in header value (write ${NAME})")
			continue
		}
		used, bad := false, false
		val := envRE.ReplaceAllStringFunc(v, func(m string) string {
			name := m[2 : len(m)-1]
			used = true
			if !envNameRE.MatchString(name) {
				c.at(p.child(k), "%q is not an environment variable name", name)
				bad = true
				return ""
			}
			x := getenv(name)
			if x == "" {
				c.at(p.child(k), "environment variable %s is not set", name)
				bad = true
			}
			return x
		})
		if bad {
			continue
		}
		out[k] = val
		if used {
			secret = append(secret, k)
		}
	}
	return out, secret
}

// whereAll records in srv.Where where each key and list entry of a kind
// block (v, at rel under the server at p) is written.
func whereAll(c *collector, p, rel path, v any, srv *plan.Server) {
	setWhere(srv, rel.String(), c.whereKey(p.child(rel...)))
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			whereAll(c, p, rel.child(k), x, srv)
		}
	case []any:
		for i, x := range v {
			whereAll(c, p, rel.child(i), x, srv)
		}
	}
}

func setWhere(srv *plan.Server, key, where string) {
	if srv.Where == nil {
		srv.Where = map[string]string{}
	}
	srv.Where[key] = where
}
