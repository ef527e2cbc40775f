package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/spf13/cobra"

	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/memnet"
	"github.com/perfscen/perfscen/runner/result"
)

// Every example in every command's --help runs, with the exit code it
// documents ("# … exit N", else 0), in a directory laid out as the
// examples assume (scenarios/, baselines/, perf_analyzer files). Examples
// that start a server or measure load (run, serve, pa, agent, baseline calibrate,
// baseline update of a scenario) are long-running or need the machine
// quiet, so their command lines are checked as cobra would take them:
// the command exists, its flags parse and its arguments are accepted.
// Those that run the quickstart scenario also run whole, on the fake
// clock and an in-memory network (onFakeClock): a few seconds, and the
// same figures however busy the machine is.
func TestHelpExamplesRun(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	copyTree(t, filepath.Join(root, "scenarios"), filepath.Join(dir, "scenarios"))
	copyTree(t, filepath.Join(root, "baselines"), filepath.Join(dir, "baselines"))
	td := filepath.Join(root, "internal", "importer", "testdata")
	for dst, src := range map[string]string{
		"perf_analyzer.csv": "default.csv", "pa_old.csv": "default.csv", "pa_new.csv": "default.csv",
		"pa_console.log": "quickstart.log", "torchserve.csv": "torchserve.csv",
		"artifacts/llama-openai-chat-concurrency8/profile_export_genai_perf.csv": "genai_perf.csv",
		"artifacts/run/profile_export_aiperf.json":                               "aiperf_profile_export_aiperf.json",
		"artifacts/run/profile_export.jsonl":                                     "aiperf_profile_export.jsonl",
	} {
		copyFile(t, filepath.Join(td, src), filepath.Join(dir, dst))
	}
	copyFile(t, filepath.Join(root, "scenarios", "quickstart.yaml"), filepath.Join(dir, "ci", "quickstart.yaml"))
	// load.yaml: a scenario agents can share (a server they all reach).
	if err := os.WriteFile(filepath.Join(dir, "load.yaml"), []byte("version: 1\nname: load\nserver: {url: \"triton.perf.svc:8000\"}\nmodels: [{name: simple}]\nload: {concurrency: 8}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Result files the compare and baseline examples read.
	for _, name := range []string{"out/before.json", "out/after.json"} {
		mustRun(t, dir, "import", "--model", "simple", "-o", name, "perf_analyzer.csv")
	}

	// out/quickstart.json: a run of the quickstart scenario, gated
	// against the copied baseline.
	mustRun(t, dir, "import", "--model", "simple", "-o", "out/quickstart.json", "perf_analyzer.csv")
	qs := readResult(t, filepath.Join(dir, "out", "quickstart.json"))
	qs.Scenario, qs.BaselinePath = "quickstart", filepath.Join(dir, "baselines", "quickstart.json")
	qs.ScenarioFile = filepath.Join(dir, "scenarios", "quickstart.yaml")
	if err := result.WriteFile(filepath.Join(dir, "out", "quickstart.json"), qs); err != nil {
		t.Fatal(err)
	}

	t.Chdir(dir)
	e := &env{ctx: context.Background(), stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, getenv: os.Getenv}
	rootCmd := newRoot(e)
	n := 0
	for _, c := range allCommands(rootCmd) {
		for _, line := range strings.Split(c.Example, "\n") {
			line = strings.TrimSpace(line)
			want := 0
			if i := strings.Index(line, "#"); i >= 0 {
				if m := exitRE.FindStringSubmatch(line[i:]); m != nil {
					want, _ = strconv.Atoi(m[1])
				}
				line = strings.TrimSpace(line[:i])
			}
			for _, part := range strings.Split(line, "&&") {
				part, _, _ = strings.Cut(part, "|") // "… | jq …": perfscen's part
				fields := strings.Fields(part)
				var envs []string
				for len(fields) > 0 && strings.Contains(fields[0], "=") {
					envs, fields = append(envs, fields[0]), fields[1:]
				}
				if len(fields) == 0 || fields[0] != "perfscen" {
					continue // curl and the like
				}
				args := expandGlobs(t, fields[1:])
				n++
				if measures(args) {
					checkParses(t, rootCmd, args)
					if onFakeClock(args) {
						runOnFakeClock(t, c.CommandPath(), part, want)
					}
					continue
				}
				// Each example stands alone: a baseline an earlier one
				// appended to is as shipped again.
				copyTree(t, filepath.Join(root, "baselines"), filepath.Join(dir, "baselines"))
				for _, kv := range envs {
					k, v, _ := strings.Cut(kv, "=")
					t.Setenv(k, v)
				}
				if code, stdout, stderr := runIn(t, dir, args...); code != want {
					t.Errorf("example %q (in %s --help): exit %d, want %d\nstdout:\n%s\nstderr:\n%s", part, c.CommandPath(), code, want, stdout, stderr)
				}
			}
		}
	}
	if n < 20 {
		t.Errorf("only %d examples found", n)
	}
}

var exitRE = regexp.MustCompile(`exit (\d)`)

// onFakeClock says whether an example that measures can run whole in the
// test: a run of the quickstart scenario alone (its model sleeps 10 ms, so
// the fake clock moves; the engine-comparison models compute on the CPU,
// and a fake clock never moves for them).
func onFakeClock(args []string) bool {
	if len(args) < 2 || args[0] != "run" || slices.Contains(args, "--agents") {
		return false
	}
	return args[1] == "scenarios/quickstart.yaml"
}

// runOnFakeClock runs the example line (shell words: quotes group) on
// synctest's clock with the embedded server on an in-memory network, in
// the current directory (the example layout), and checks its exit code.
func runOnFakeClock(t *testing.T, cmd, line string, want int) {
	t.Run(line, func(t *testing.T) {
		args := shellWords(line)[1:]
		synctest.Test(t, func(t *testing.T) {
			var mem memnet.Network
			var out, errb bytes.Buffer
			e := &env{ctx: context.Background(), stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: os.Getenv,
				net: &kinds.Net{Listen: mem.Listen, Dial: mem.Dial}}
			code := runEnv(e, args)
			if code == 0 && !strings.Contains(out.String(), "checks passed") {
				t.Errorf("example %q: exit 0 without a verdict of passed checks:\n%s", line, out.String())
			}
			if code != want {
				t.Errorf("example %q (in %s --help), run on the fake clock: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", line, cmd, code, want, out.String(), errb.String())
			}
		})
	})
}

// shellWords splits a command line as a shell would for the examples:
// on blanks, with single or double quotes grouping ('sweep.concurrency=[1, 2]').
func shellWords(line string) []string {
	var out []string
	var cur strings.Builder
	quote, in := rune(0), false
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote == 0 && (r == '\'' || r == '"'):
			quote, in = r, true
		case quote == 0 && (r == ' ' || r == '\t'):
			if in {
				out, in = append(out, cur.String()), false
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// measures says whether a command line starts a server or sends load.
func measures(args []string) bool {
	if len(args) == 0 {
		return false
	}
	switch args[0] {
	case "run", "serve", "pa", "agent":
		return true
	case "baseline":
		if len(args) > 1 && args[1] == "calibrate" {
			return true
		}
		if len(args) > 1 && args[1] == "update" {
			for _, a := range args[2:] {
				if a == "--from" {
					return false
				}
			}
			return true
		}
	}
	return false
}

// checkParses takes args as cobra would: the command, its flags, its
// arguments.
func checkParses(t *testing.T, root *cobra.Command, args []string) {
	t.Helper()
	c, rest, err := root.Find(args)
	if err != nil || c == root {
		t.Errorf("example perfscen %s: no such command (%v)", strings.Join(args, " "), err)
		return
	}
	if err := c.ParseFlags(rest); err != nil {
		t.Errorf("example perfscen %s: %v", strings.Join(args, " "), err)
		return
	}
	if err := c.ValidateArgs(c.Flags().Args()); err != nil {
		t.Errorf("example perfscen %s: %v", strings.Join(args, " "), err)
	}
}

func allCommands(c *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{c}
	for _, s := range c.Commands() {
		out = append(out, allCommands(s)...)
	}
	return out
}

func expandGlobs(t *testing.T, args []string) []string {
	var out []string
	for _, a := range args {
		if strings.ContainsAny(a, "*?") {
			m, _ := filepath.Glob(a)
			if len(m) == 0 {
				t.Errorf("glob %s matches nothing", a)
			}
			out = append(out, m...)
			continue
		}
		out = append(out, strings.Trim(a, `'"`))
	}
	return out
}

func runIn(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{ctx: context.Background(), stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: os.Getenv}
	return runEnv(e, args), out.String(), errb.String()
}

func mustRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	if code, _, stderr := runIn(t, dir, args...); code != 0 {
		t.Fatalf("perfscen %v: exit %d: %s", args, code, stderr)
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		copyFile(t, p, filepath.Join(dst, rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
