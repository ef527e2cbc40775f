//go:build linux

package tritoncapi

import (
	"context"
	"fmt"
	"github.com/perfscen/perfscen/internal/kservev2/inferencepb"
	"google.golang.org/protobuf/encoding/prototext"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/kservev2"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// Kind is Triton's in-process C API.
type Kind struct{}

// Name is the scenario's server.kind.
func (Kind) Name() string { return Name }

// model is one plan model as the in-process server describes it.
type model struct {
	plan      plan.Model
	cfg       *kservev2.ModelConfig
	decoupled bool
}

// server is the in-process Triton made ready for load.
type server struct {
	plan   *plan.Plan
	cfg    config
	ts     *tserver
	md     *kservev2.ServerMetadata
	models map[string]*model // by alias
	data   map[string]*inputdata.Data
	notes  []string
	// pinned are the input pins of closed points: Triton may read a
	// request's inputs until it releases the request, which can come after
	// its final response (and never, from a hung model). They are unpinned
	// once the server is stopped and deleted, when no request is left.
	pinMu  sync.Mutex
	pinned []*runtime.Pinner
}

// keepPinned holds a closed point's pins until the server stops.
func (s *server) keepPinned(p *runtime.Pinner) {
	s.pinMu.Lock()
	s.pinned = append(s.pinned, p)
	s.pinMu.Unlock()
}

// unpinAll releases every pin kept; the server holds no request then.
func (s *server) unpinAll() {
	s.pinMu.Lock()
	defer s.pinMu.Unlock()
	for _, p := range s.pinned {
		p.Unpin()
	}
	s.pinned = nil
}

// Open loads the library, starts the server, loads the scenario's models
// (Triton's reason, naming the model, is exit 2 when one fails) and checks
// the input data against their configs, all before any load.
func (Kind) Open(ctx context.Context, p *plan.Plan, env kinds.Env) (_ kinds.Server, err error) {
	if p.Server().Embedded {
		return nil, failure.Invalid(fmt.Errorf("%s: kind %s has no embedded server; it starts Triton from server.%s.library", kinds.ServerField(p.Server()), Name, Name))
	}
	c, err := loadSettings(p)
	if err != nil {
		return nil, err
	}
	field := kinds.OptionsField(srvWithKind(p.Server()))
	l, err := openLib(c.Library)
	if err != nil {
		return nil, failure.Invalid(fmt.Errorf("%s: %w", kinds.OptionField(srvWithKind(p.Server()), "library"), err))
	}
	makeCallbacks(l)
	// Python models run in stub processes that inherit this environment:
	// keep them from writing __pycache__ into a (possibly read-only)
	// repository, as tritonserver's wrapper scripts do.
	if os.Getenv("PYTHONDONTWRITEBYTECODE") == "" {
		os.Setenv("PYTHONDONTWRITEBYTECODE", "1")
	}
	ts, err := newTServer(l, c)
	if err != nil {
		return nil, failure.Invalid(fmt.Errorf("%s: starting Triton in process (repository %s, backends %s): %w", field, c.ModelRepository, c.BackendDirectory, err))
	}
	s := &server{plan: p, cfg: c, ts: ts, models: map[string]*model{}}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if s.md, err = ts.metadata(); err != nil {
		return nil, failure.Env(fmt.Errorf("server metadata: %w", err))
	}
	loaded := map[string]bool{}
	for _, m := range p.Models {
		if !loaded[m.Name] {
			if err := ctx.Err(); err != nil {
				return nil, failure.Env(err)
			}
			if err := ts.load(m.Name); err != nil {
				return nil, failure.Invalid(fmt.Errorf("model %q (alias %s) did not load from %s: %w%s", m.Name, m.Alias, c.ModelRepository, err, repositoryHint(c.ModelRepository, m.Name, err)))
			}
			loaded[m.Name] = true
		}
		cfg, err := ts.modelConfig(m.Name, m.Version)
		if err != nil {
			return nil, failure.Invalid(fmt.Errorf("model %q (alias %s) config: %w", m.Name, m.Alias, err))
		}
		mm := &model{plan: m, cfg: cfg}
		if pb := cfg.Proto; pb != nil && pb.GetModelTransactionPolicy().GetDecoupled() {
			mm.decoupled = true
		}
		if cfg.SequenceBatching && !m.Sequence {
			return nil, failure.Invalid(fmt.Errorf("model %q (alias %s) has a sequence batcher: set sequence: true so requests carry correlation ids", m.Name, m.Alias))
		}
		s.models[m.Alias] = mm
	}
	if s.data, err = s.loadInputs(); err != nil {
		return nil, err
	}
	return s, nil
}

// loadInputs prepares every point's input data and checks it against the
// model configs.
func (s *server) loadInputs() (map[string]*inputdata.Data, error) {
	out := map[string]*inputdata.Data{}
	for _, pt := range s.plan.Points {
		key := inputKey(pt)
		if _, done := out[key]; done {
			continue
		}
		m, ok := s.models[pt.Model]
		if !ok {
			return nil, failure.Invalid(fmt.Errorf("point %s: model alias %q is not in the plan's models", pt.ID, pt.Model))
		}
		if pt.SharedMemory != "" && pt.SharedMemory != plan.ShmNone {
			return nil, failure.Invalid(fmt.Errorf("point %s: shared_memory %s does not apply to %s: tensors are handed to the server in process", pt.ID, pt.SharedMemory, Name))
		}
		if pt.Load.Streaming && !m.decoupled {
			// Streaming is gRPC's; in process every model may answer
			// several times, so it is accepted and means nothing.
			s.notes = appendOnce(s.notes, "load.streaming has no meaning in process; requests go through ServerInferAsync either way")
		}
		spec := specOf(m)
		d, err := inputdata.Load(spec, inputdata.Source{Kind: m.plan.Input.Kind, Paths: m.plan.Input.Paths, BatchSize: pt.BatchSize,
			Shapes: pt.Shapes, StringLength: m.plan.Input.StringLength, StringData: m.plan.Input.StringData, Seed: 1})
		if err != nil {
			return nil, failure.Invalid(fmt.Errorf("input data for model %s (point %s): %w", m.plan.Alias, pt.ID, err))
		}
		out[key] = d
	}
	return out, nil
}

// repositoryHint lists the repository's models when it has no folder for
// name; Triton only says it "failed to poll".
func repositoryHint(repo, name string, loadErr error) string {
	if st, err := os.Stat(filepath.Join(repo, name)); err == nil && st.IsDir() {
		// Triton could not read the folder's configuration: say why.
		if loadErr != nil && strings.Contains(loadErr.Error(), "failed to poll") {
			return configHint(filepath.Join(repo, name, "config.pbtxt"))
		}
		return ""
	}
	entries, err := os.ReadDir(repo)
	if err != nil {
		return ""
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		return "; the repository holds no model"
	}
	return "; the repository holds no folder " + name + ", its models: " + strings.Join(names, ", ")
}

// configHint names what is wrong in a model's config.pbtxt, read as
// Triton reads it (text-format inference.ModelConfig): Triton's load
// error says only "failed to poll from model repository" and prints the
// parser's reason (e.g. no field named max_bach_size) to its own stderr.
func configHint(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	if err := prototext.Unmarshal(b, &inferencepb.ModelConfig{}); err != nil {
		return fmt.Sprintf("; %s does not parse as a model configuration: %v", path, err)
	}
	return ""
}

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

func inputKey(pt plan.Point) string {
	return fmt.Sprintf("%s|b=%d|s=%s", pt.Model, pt.BatchSize, pt.ShapeSet)
}

func specOf(m *model) inputdata.ModelSpec {
	spec := inputdata.ModelSpec{Name: m.plan.Name, MaxBatchSize: m.cfg.MaxBatchSize}
	for _, t := range m.cfg.Inputs {
		spec.Inputs = append(spec.Inputs, inputdata.TensorSpec{Name: t.Name, DataType: t.DataType, Dims: t.Dims, Optional: t.Optional})
	}
	for _, t := range m.cfg.Outputs {
		spec.Outputs = append(spec.Outputs, inputdata.TensorSpec{Name: t.Name, DataType: t.DataType, Dims: t.Dims})
	}
	return spec
}

func (s *server) Info() result.ServerInfo {
	info := result.ServerInfo{Key: s.plan.Server().Name, URL: "c-api:" + s.cfg.Library, InProcess: true}
	if s.md != nil {
		info.Name, info.Version = s.md.Name, s.md.Version
		info.Extensions = append([]string(nil), s.md.Extensions...)
	}
	return info
}

func (s *server) Notes() []string {
	out := append([]string(nil), s.notes...)
	sort.Strings(out)
	return out
}

// Close unloads the models and stops and deletes the server; every
// request is released by then.
func (s *server) Close() error {
	err := s.ts.close()
	if err == nil {
		s.unpinAll()
	}
	// A server that did not stop may still hold requests: its inputs stay
	// pinned (and referenced here) for the life of the process, which is
	// what a hung model costs, never a freed buffer Triton reads.
	return err
}
