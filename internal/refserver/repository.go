package refserver

import (
	"maps"
	"slices"
	"sync"

	"github.com/perfscen/perfscen/internal/procacct"
)

// Repository index states, as Triton names them.
const (
	stateReady       = "READY"
	stateUnavailable = "UNAVAILABLE"
)

// modelEntry is a repository slot: a built-in definition, its current
// parameter map and, while loaded, the serving model.
type modelEntry struct {
	def    *modelDef
	kv     map[string]string
	loaded *loadedModel
	reason string
}

// repository owns which models exist and which are loaded.
type repository struct {
	mu      sync.RWMutex
	entries map[string]*modelEntry
	after   afterFunc // the models' timers
	devices devices   // shared by models naming one device
	// acct, when set, accounts each model's instance threads
	// (Options.AccountThreads).
	acct *procacct.Threads
}

func (r *repository) get(name string) (*loadedModel, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.entries[name]
	if !ok || e.loaded == nil {
		return nil, false
	}
	return e.loaded, true
}

// known reports whether the repository holds name, loaded or not.
func (r *repository) known(name string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	_, ok := r.entries[name]
	return ok
}

// params builds the parsed parameters of e's model from its defaults and
// current map.
func (e *modelEntry) params() (modelParams, error) { return paramsFor(e.def, e.kv) }

func paramsFor(def *modelDef, kv map[string]string) (modelParams, error) {
	p := defaultParams()
	if def.defaults != nil {
		def.defaults(&p)
	}
	return applyParams(p, kv)
}

// load (re)loads a model; loading a loaded model reloads it with fresh
// statistics, as Triton does.
func (r *repository) load(name string) error { return r.loadWith(name, "") }

// loadWith loads a model, with a config override (JSON) when cfgJSON is
// not empty. A model whose override is refused keeps serving as before.
func (r *repository) loadWith(name, cfgJSON string) error {
	r.mu.Lock()
	e, ok := r.entries[name]
	if !ok {
		r.mu.Unlock()
		return errorf(codeInternal, "failed to load '%s', failed to poll from model repository", name)
	}
	def, kv := e.def, e.kv
	if cfgJSON != "" {
		var err error
		if def, kv, err = overrideModel(e.def, e.kv, cfgJSON); err != nil {
			r.mu.Unlock()
			return errorf(codeInvalidArg, "failed to load '%s', %v", name, err)
		}
	}
	p, err := paramsFor(def, kv)
	if err != nil {
		r.mu.Unlock()
		return errorf(codeInvalidArg, "failed to load '%s': %v", name, err)
	}
	old := e.loaded
	e.loaded = loadModel(def, p, kv, r.after, r.acct)
	e.loaded.devices = &r.devices
	e.reason = ""
	r.mu.Unlock()
	if old != nil {
		old.close()
	}
	return nil
}

// unload stops serving a model after its queued requests finish.
func (r *repository) unload(name string) error {
	r.mu.Lock()
	e, ok := r.entries[name]
	if !ok {
		// Triton in explicit mode: unloading what is not loaded succeeds.
		r.mu.Unlock()
		return nil
	}
	old := e.loaded
	e.loaded = nil
	e.reason = "unloaded"
	r.mu.Unlock()
	if old != nil {
		old.close()
	}
	return nil
}

type indexEntry struct {
	name, version, state, reason string
}

func (r *repository) index(readyOnly bool) []indexEntry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []indexEntry
	for _, name := range slices.Sorted(maps.Keys(r.entries)) {
		e := r.entries[name]
		if e.loaded != nil {
			out = append(out, indexEntry{name: name, version: modelVersion, state: stateReady})
		} else if !readyOnly {
			out = append(out, indexEntry{name: name, version: modelVersion, state: stateUnavailable, reason: e.reason})
		}
	}
	return out
}

// loadedModels lists serving models sorted by name.
func (r *repository) loadedModels() []*loadedModel {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []*loadedModel
	for _, name := range slices.Sorted(maps.Keys(r.entries)) {
		if m := r.entries[name].loaded; m != nil {
			out = append(out, m)
		}
	}
	return out
}

func (r *repository) closeAll() {
	r.mu.Lock()
	var all []*loadedModel
	for _, e := range r.entries {
		if e.loaded != nil {
			all = append(all, e.loaded)
			e.loaded = nil
		}
	}
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, m := range all {
		wg.Go(m.close)
	}
	wg.Wait()
}
