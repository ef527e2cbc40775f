package tritoncapi

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/runner/plan"
)

// Name is the kind's server.kind.
const Name = "triton_c_api"

// settings are the kind's block, server.triton_c_api.
type settings struct {
	// Library is libtritonserver.so (relative paths: to the scenario).
	Library string `json:"library"`
	// ModelRepository is the model repository the in-process server
	// loads the scenario's models from.
	ModelRepository string `json:"model_repository"`
	// BackendDirectory holds the backends (backend/libtriton_backend.so);
	// default: backends/ beside the library's folder when it exists, else
	// Triton's /opt/tritonserver/backends.
	BackendDirectory string `json:"backend_directory,omitempty"`
	// StrictModelConfig refuses models without a complete config.pbtxt
	// (Triton's --strict-model-config; default false).
	StrictModelConfig bool `json:"strict_model_config,omitempty"`
	// LogVerbose is Triton's verbose log level (0 = off).
	LogVerbose int `json:"log_verbose,omitempty"`
	// LogInfo turns Triton's info log on (default off: warnings and
	// errors only, so the report stays readable).
	LogInfo bool `json:"log_info,omitempty"`
	// LogFile sends Triton's log to a file instead of standard error.
	LogFile string `json:"log_file,omitempty"`
	// PinnedMemoryPool is the pinned memory pool in bytes (default 0:
	// CPU-only builds have no pinned memory).
	PinnedMemoryPool int64 `json:"pinned_memory_pool_byte_size,omitempty"`
	// ExitTimeout bounds how long stopping waits for in-flight requests
	// (default 30s, as tritonserver).
	ExitTimeout string `json:"exit_timeout,omitempty"`
}

// resolved settings: absolute paths, durations.
type config struct {
	settings
	exitTimeout time.Duration
}

// Defaults.
const (
	defaultExitTimeout = 30 * time.Second
	tritonBackends     = "/opt/tritonserver/backends"
)

// loadSettings decodes and checks the kind's block; paths are made
// absolute against the scenario's folder. Every mistake is exit 2,
// naming the field.
func loadSettings(p *plan.Plan) (config, error) {
	srv := p.Server()
	var c config
	if err := kinds.DecodeOptions(srv, &c.settings); err != nil {
		return c, err
	}
	field := func(k string) string { return kinds.OptionField(srvWithKind(srv), k) }
	dir := "."
	if p.ScenarioPath != "" {
		dir = filepath.Dir(p.ScenarioPath)
	}
	abs := func(path string) string {
		if path == "" || filepath.IsAbs(path) {
			return path
		}
		if a, err := filepath.Abs(filepath.Join(dir, path)); err == nil {
			return a
		}
		return path
	}
	if c.Library == "" {
		return c, failure.Invalid(fmt.Errorf("%s is required: the path of libtritonserver.so", kinds.OptionsField(srvWithKind(srv))+".library"))
	}
	if c.ModelRepository == "" {
		return c, failure.Invalid(fmt.Errorf("%s is required: the model repository to load the models from", kinds.OptionsField(srvWithKind(srv))+".model_repository"))
	}
	c.Library, c.ModelRepository, c.BackendDirectory, c.LogFile = abs(c.Library), abs(c.ModelRepository), abs(c.BackendDirectory), abs(c.LogFile)
	if st, err := os.Stat(c.ModelRepository); err != nil || !st.IsDir() {
		return c, failure.Invalid(fmt.Errorf("%s: %s is not a folder", field("model_repository"), c.ModelRepository))
	}
	if c.BackendDirectory == "" {
		c.BackendDirectory = tritonBackends
		beside := filepath.Join(filepath.Dir(filepath.Dir(c.Library)), "backends")
		if st, err := os.Stat(beside); err == nil && st.IsDir() {
			c.BackendDirectory = beside
		}
	} else if st, err := os.Stat(c.BackendDirectory); err != nil || !st.IsDir() {
		return c, failure.Invalid(fmt.Errorf("%s: %s is not a folder", field("backend_directory"), c.BackendDirectory))
	}
	var err error
	if c.exitTimeout, err = duration(c.ExitTimeout, defaultExitTimeout); err != nil {
		return c, failure.Invalid(fmt.Errorf("%s: %w", field("exit_timeout"), err))
	}
	if c.LogVerbose < 0 {
		return c, failure.Invalid(fmt.Errorf("%s: must be >= 0", field("log_verbose")))
	}
	if c.PinnedMemoryPool < 0 {
		return c, failure.Invalid(fmt.Errorf("%s: must be >= 0", field("pinned_memory_pool_byte_size")))
	}
	return c, nil
}

// Check reads the kind's block as Open will and looks at the paths it
// names (the library is only looked for: loading it is Open's), so
// perfscen validate refuses what run would, at the key's line.
func (Kind) Check(p *plan.Plan) error {
	c, err := loadSettings(p)
	if err != nil {
		return err
	}
	if st, err := os.Stat(c.Library); err != nil {
		return failure.Invalid(fmt.Errorf("%s: %w", kinds.OptionField(srvWithKind(p.Server()), "library"), err))
	} else if st.IsDir() {
		return failure.Invalid(fmt.Errorf("%s: %s is a folder, not libtritonserver.so", kinds.OptionField(srvWithKind(p.Server()), "library"), c.Library))
	}
	return nil
}

func srvWithKind(s plan.Server) plan.Server {
	if s.Kind == "" {
		s.Kind = Name
	}
	return s
}

func duration(s string, def time.Duration) (time.Duration, error) {
	if s == "" {
		return def, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	if d <= 0 {
		return 0, fmt.Errorf("must be > 0")
	}
	return d, nil
}
