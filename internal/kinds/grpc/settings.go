package grpc

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/runner/plan"
)

// settings is the server.grpc block as written.
type settings struct {
	// Method is the method every model calls, pkg.Service/Method.
	Method string `json:"method"`
	// Methods gives a model (by alias) a method of its own.
	Methods map[string]string `json:"methods"`
	// ProtoFiles are compiled at run time, found as protoc finds its
	// inputs: each lies under one of ImportPaths (default: the scenario's
	// folder), and its imports are looked up in ImportPaths in order,
	// then among the well-known types protoc ships.
	ProtoFiles  []string `json:"proto_files"`
	ImportPaths []string `json:"import_paths"`
	// Protoset is a FileDescriptorSet (protoc --include_imports
	// --descriptor_set_out, buf build -o).
	Protoset string `json:"protoset"`
	// Reflection asks the server for the descriptors; the default when
	// neither ProtoFiles nor Protoset is given.
	Reflection *bool `json:"reflection"`
	// Metadata is sent with every call, besides server.headers.
	Metadata map[string]string `json:"metadata"`
	// Deadline is every call's gRPC deadline (default server.timeout).
	Deadline string `json:"deadline"`
	// MaxReceiveSize bounds a response message (default 64 MiB).
	MaxReceiveSize int `json:"max_receive_size"`
	// Replies ends a call of a server- or bidi-streaming method after
	// that many replies, for a stream the server never ends on its own
	// (etcd's Watch); 0 waits for the server to end it.
	Replies int `json:"replies"`
}

// config is the checked settings, paths resolved.
type config struct {
	methods     map[string]methodName // by model alias
	methodField map[string]string     // where each model's method was given
	protoFiles  []string              // as written, and resolved below
	protoPaths  []string
	importPaths []string
	protoset    string
	reflection  bool
	metadata    map[string]string
	deadline    time.Duration
	maxRecv     int
	replies     int
	field       string // server.grpc or servers.NAME.grpc, for messages
	srv         plan.Server
}

const defaultMaxReceive = 64 << 20

// defaultDeadline stands in for server.timeout in a plan built without
// one (the scenario's default is 30s).
const defaultDeadline = 30 * time.Second

// loadConfig decodes and checks the kind block of p's server: every model
// has a well-formed method, one descriptor source is named, and relative
// paths resolve against the scenario file's folder (the scenario resolves
// its own keys that way; the kind block reaches the kind as written).
func loadConfig(p *plan.Plan) (*config, error) {
	var s settings
	if err := kinds.DecodeOptions(p.Server(), &s); err != nil {
		return nil, err
	}
	field := kinds.OptionsField(p.Server())
	bad := func(key, format string, args ...any) error {
		return failure.Invalid(fmt.Errorf("%s: %s", kinds.OptionField(p.Server(), key), fmt.Sprintf(format, args...)))
	}
	c := &config{field: field, srv: p.Server(), methods: map[string]methodName{}, methodField: map[string]string{}, metadata: s.Metadata, maxRecv: s.MaxReceiveSize}
	dir := "."
	if p.ScenarioPath != "" {
		dir = filepath.Dir(p.ScenarioPath)
	}
	rel := func(path string) string {
		if path == "" || filepath.IsAbs(path) {
			return path
		}
		return filepath.Join(dir, path)
	}

	var def methodName
	if s.Method != "" {
		m, err := parseMethod(s.Method)
		if err != nil {
			return nil, bad("method", "%v", err)
		}
		def = m
	}
	aliases := map[string]bool{}
	for _, m := range p.Models {
		alias := localAlias(m)
		aliases[alias] = true
		if w, ok := s.Methods[alias]; ok {
			mn, err := parseMethod(w)
			if err != nil {
				return nil, bad("methods."+alias, "%v", err)
			}
			c.methods[m.Alias] = mn
			c.methodField[m.Alias] = field + ".methods." + alias
			continue
		}
		if def.service == "" {
			return nil, failure.Invalid(fmt.Errorf("%s: model %s has no method: give method (pkg.Service/Method) or methods.%s", field, m.Alias, alias))
		}
		c.methods[m.Alias] = def
		c.methodField[m.Alias] = field + ".method"
	}
	for _, alias := range sortedKeys(s.Methods) {
		if !aliases[alias] {
			known := sortedKeys(aliases)
			return nil, bad("methods."+alias, "no model has alias %q (models: %s)", alias, strings.Join(known, ", "))
		}
	}

	c.protoFiles = s.ProtoFiles
	for _, f := range s.ProtoFiles {
		if f == "" {
			return nil, bad("proto_files", "an empty path")
		}
		c.protoPaths = append(c.protoPaths, rel(f))
	}
	for _, ip := range s.ImportPaths {
		if ip == "" {
			return nil, bad("import_paths", "an empty path")
		}
		c.importPaths = append(c.importPaths, rel(ip))
	}
	if len(s.ImportPaths) > 0 && len(s.ProtoFiles) == 0 {
		return nil, bad("import_paths", "applies only with proto_files")
	}
	if len(c.importPaths) == 0 {
		// protoc's default import path is the current folder; a scenario's
		// paths are relative to its file, so its folder plays that part.
		c.importPaths = []string{dir}
	}
	c.protoset = rel(s.Protoset)
	sources := 0
	for _, set := range []bool{len(s.ProtoFiles) > 0, s.Protoset != "", s.Reflection != nil && *s.Reflection} {
		if set {
			sources++
		}
	}
	switch {
	case sources > 1:
		key := "reflection" // named where it is written
		if s.Protoset != "" && len(s.ProtoFiles) > 0 {
			key = "protoset"
		}
		return nil, bad(key, "give one source of descriptors: proto_files, protoset or reflection: true")
	case sources == 0 && s.Reflection != nil:
		return nil, bad("reflection", "is false, and neither proto_files nor protoset is given: the methods cannot be described")
	case sources == 0:
		c.reflection = true
	default:
		c.reflection = s.Reflection != nil && *s.Reflection
	}

	c.deadline = p.Server().Timeout
	if c.deadline <= 0 {
		c.deadline = defaultDeadline
	}
	if s.Deadline != "" {
		d, err := time.ParseDuration(s.Deadline)
		if err != nil || d <= 0 {
			return nil, bad("deadline", "%q is not a positive duration", s.Deadline)
		}
		c.deadline = d
	}
	if c.maxRecv < 0 {
		return nil, bad("max_receive_size", "must be > 0")
	}
	if s.Replies < 0 {
		return nil, bad("replies", "must be 1 or more (or left out: wait for the server to end the stream)")
	}
	c.replies = s.Replies
	if c.maxRecv == 0 {
		c.maxRecv = defaultMaxReceive
	}
	for _, k := range sortedKeys(s.Metadata) {
		if err := checkMetadataKey(k); err != nil {
			return nil, bad("metadata."+k, "%v", err)
		}
	}
	for k := range p.Server().Headers {
		if _, dup := s.Metadata[strings.ToLower(k)]; dup {
			return nil, bad("metadata."+strings.ToLower(k), "is also given in %s.headers", kinds.ServerField(p.Server()))
		}
	}
	return c, nil
}

// localAlias is a model's alias without its server prefix: the methods
// map sits inside one server's block.
func localAlias(m plan.Model) string {
	if m.Server != "" {
		return strings.TrimPrefix(m.Alias, m.Server+"/")
	}
	return m.Alias
}

// checkMetadataKey applies gRPC's rules for metadata keys: lower case
// letters, digits and - _ . only, and not the reserved grpc- prefix.
func checkMetadataKey(k string) error {
	if k == "" {
		return fmt.Errorf("an empty key")
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return fmt.Errorf("metadata keys hold lower-case letters, digits, -, _ and . only")
		}
	}
	if strings.HasPrefix(k, "grpc-") {
		return fmt.Errorf("keys starting grpc- are reserved for gRPC itself")
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// key names key of the block in messages, at its line in the scenario.
func (c *config) key(key string) string { return kinds.OptionField(c.srv, key) }
