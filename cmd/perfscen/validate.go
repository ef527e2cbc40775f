package main

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/kinds/all"
	"github.com/perfscen/perfscen/internal/kinds/openai"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/internal/transport"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/scenario"
)

func init() { register(newValidateCmd) }

func newValidateCmd(e *env) *cobra.Command {
	var set []string
	cmd := &cobra.Command{
		Use:   "validate FILE|DIR...",
		Short: "Check scenario files without running them",
		Long: `validate loads each scenario as run would (schema, units, references,
environment variables, input-data paths, and the files a server block
names: TLS files, a grpc kind's .proto files or protoset, Triton's library
and model repository) and prints "ok  FILE" for a valid one or every
problem of an invalid one, one per line as FILE:LINE:COL: PATH: MESSAGE. A
directory stands for every *.yaml and *.yml file in it (the Triton
scenarios of scenarios/ name files beside the checkout, ../shared/triton:
without them they are refused, as run refuses them).

Exit status: 0 when every file is valid, 2 otherwise.`,
		Example: `  perfscen validate scenarios/quickstart.yaml
  perfscen validate scenarios/quickstart.yaml scenarios/llm-quickstart.yaml
  TRITON_TOKEN=x perfscen validate ci/*.yaml`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runValidate(e, args, set) },
	}
	cmd.Flags().StringArrayVar(&set, "set", nil, "check the file with an override laid over it, path=value (as perfscen run --set)")
	return cmd
}

func runValidate(e *env, args, set []string) error {
	files, err := scenarioFiles(args)
	if err != nil {
		return exitcode.AsInvalid(err)
	}
	bad := 0
	for _, f := range files {
		pl, err := scenario.LoadPlanWith(f, e.getenv, set)
		if err == nil {
			err = checkEmbedded(pl)
		}
		if err == nil {
			err = checkKinds(pl)
		}
		if err != nil {
			bad++
			printScenarioError(e, f, err)
			continue
		}
		fmt.Fprintf(e.stdout, "ok  %s\n", f)
	}
	if err := duplicateNames(files, e.getenv); err != nil {
		fmt.Fprintf(e.stderr, "perfscen: %v\n", err)
		bad++
	}
	if bad > 0 {
		return exitSilently(exitcode.Invalid)
	}
	return nil
}

// printScenarioError writes a load failure to stderr, one problem a line.
func printScenarioError(e *env, file string, err error) {
	var errs *scenario.Errors
	if errors.As(err, &errs) {
		for _, x := range errs.List {
			fmt.Fprintln(e.stderr, x.Error())
		}
		return
	}
	// A kind's check joins one positioned line per problem.
	for u := err; u != nil; u = errors.Unwrap(u) {
		if j, ok := u.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				fmt.Fprintln(e.stderr, x.Error())
			}
			return
		}
	}
	if strings.HasPrefix(err.Error(), file+":") {
		// Already at its line in the file (a kind's check of its block).
		fmt.Fprintln(e.stderr, err)
		return
	}
	fmt.Fprintf(e.stderr, "%s: %v\n", file, err)
}

// checkKinds lets each server's kind check what it reads without a
// server (request files), as it will before any load.
func checkKinds(pl *plan.Plan) error {
	if err := checkTLS(pl); err != nil {
		return err
	}
	for _, srv := range pl.Servers {
		k, err := all.Kinds().Lookup(srv.Kind)
		if err != nil {
			return err
		}
		if c, ok := k.(kinds.Checker); ok {
			if err := c.Check(pl.ForServer(srv)); err != nil {
				return err
			}
		}
	}
	return nil
}

// scenarioFiles expands directories into their *.yaml and *.yml files.
// checkTLS reads each server's TLS files as opening the server will, so
// an unreadable or malformed one is refused before any load, and by
// perfscen validate, at its key's line.
func checkTLS(pl *plan.Plan) error {
	var errs []error
	for _, srv := range pl.Servers {
		t := srv.TLS
		if !t.Enabled {
			continue
		}
		unreadable := false
		for _, f := range []struct{ key, path string }{{"ca_file", t.CAFile}, {"cert_file", t.CertFile}, {"key_file", t.KeyFile}} {
			if f.path == "" {
				continue
			}
			if err := readable(f.path); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", kinds.ServerKeyField(srv, "tls."+f.key), err))
				unreadable = true
			}
		}
		if unreadable {
			continue
		}
		if _, err := transport.TLSConfig(t.CAFile, t.CertFile, t.KeyFile, t.ServerName, t.Insecure); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", kinds.ServerKeyField(srv, "tls"), err))
		}
	}
	return failure.Invalid(errors.Join(errs...))
}

// readable says why the file at path cannot be read, or nil.
func readable(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return fmt.Errorf("%s is a folder, not a file", path)
	}
	return nil
}

func scenarioFiles(args []string) ([]string, error) {
	var files []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, fmt.Errorf("scenario %w", err)
		}
		if !st.IsDir() {
			files = append(files, a)
			continue
		}
		var found []string
		for _, pat := range []string{"*.yaml", "*.yml"} {
			m, err := filepath.Glob(filepath.Join(a, pat))
			if err != nil {
				return nil, fmt.Errorf("listing %s: %w", a, err)
			}
			found = append(found, m...)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: no *.yaml or *.yml scenario files in this directory", a)
		}
		sort.Strings(found)
		files = append(files, found...)
	}
	return files, nil
}

// checkEmbedded checks what only the embedded server knows: its model
// names and their parameters. The scenario package stays free of the
// server; run would refuse the same things, after starting.
func checkEmbedded(pl *plan.Plan) error {
	var errs []error
	for _, srv := range pl.Servers {
		if !srv.Embedded {
			continue
		}
		base := refserver.Options{}
		if srv.Kind == plan.KindOpenAI {
			base.Mounts = []refserver.Mount{openai.Mount()}
		}
		prefix := "server.embedded"
		if srv.Name != "" {
			prefix = "servers." + srv.Name + ".embedded"
		}
		// One check per model and per parameter block, each reported at
		// the scenario line that names it.
		unknown := map[string]bool{}
		for _, name := range slices.Sorted(maps.Keys(srv.EmbeddedModels)) {
			o := base
			o.ModelParams = map[string]map[string]string{name: srv.EmbeddedModels[name]}
			if err := refserver.CheckOptions(o); err != nil {
				errs = append(errs, located(srv.ParamsWhere[name], prefix, err))
				if refserver.CheckOptions(refserver.Options{Models: []string{name}, Mounts: base.Mounts}) != nil {
					unknown[name] = true
				}
			}
		}
		for _, m := range pl.Models {
			if m.Server != srv.Name || unknown[m.Name] {
				continue // a model already reported unknown is one mistake
			}
			o := base
			o.Models = []string{m.Name}
			if err := refserver.CheckOptions(o); err != nil {
				errs = append(errs, located(m.Where, prefix, err))
			}
		}
	}
	return errors.Join(errs...)
}

// located prefixes err with where the scenario names what it is about,
// else with the field it concerns.
func located(where, field string, err error) error {
	if where != "" {
		return fmt.Errorf("%s: %w", where, err)
	}
	return fmt.Errorf("%s: %w", field, err)
}
