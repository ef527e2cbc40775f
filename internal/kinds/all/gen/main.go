// Command gen writes what the public side knows of the service kinds
// (internal/kinds/all) into schemas/, which cannot import them: the
// server.kind enum and every kind's server.<kind> block in
// scenario.schema.json, and kinds_gen.go (each kind's default protocol and
// whether it needs a url). Run it as go generate ./schemas; a test fails
// while the committed files differ from what it writes.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/kinds/all"
	"github.com/perfscen/perfscen/runner/plan"
)

// regenerate is the command that rewrites the generated files.
const regenerate = "go generate ./schemas"

const (
	schemaFile = "scenario.schema.json"
	goFile     = "kinds_gen.go"
)

func main() {
	dir := flag.String("dir", ".", "the schemas folder")
	flag.Parse()
	if err := write(*dir, all.Kinds().All()); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// write regenerates the files of dir from ks.
func write(dir string, ks []kinds.Kind) error {
	files, err := generate(dir, ks)
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

type file struct {
	name string
	data []byte
}

// generate returns the generated files of dir as ks make them.
func generate(dir string, ks []kinds.Kind) ([]file, error) {
	old, err := os.ReadFile(filepath.Join(dir, schemaFile))
	if err != nil {
		return nil, err
	}
	sch, err := scenarioSchema(old, ks)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", schemaFile, err)
	}
	src, err := goFacts(ks)
	if err != nil {
		return nil, err
	}
	return []file{{schemaFile, sch}, {goFile, src}}, nil
}

// The generated part of the scenario schema is the tail of
// $defs.server.properties, from its "kind" member to the end: the kind
// enum, then each kind's block. The rest of the file is written by hand
// and kept byte for byte; a single file stays what editors and the
// embedded compiler read alike.
const (
	serverLine = `    "server": {`
	propsLine  = `      "properties": {`
	propsEnd   = `      }`
	kindPrefix = `        "kind": `
	indent     = "        "
)

// scenarioSchema returns old with its generated part made from ks.
func scenarioSchema(old []byte, ks []kinds.Kind) ([]byte, error) {
	lines := strings.Split(string(old), "\n")
	server := slices.Index(lines, serverLine)
	if server < 0 {
		return nil, fmt.Errorf("no line %q ($defs.server)", serverLine)
	}
	props := server + 1 + slices.Index(lines[server+1:], propsLine)
	if props <= server {
		return nil, fmt.Errorf("no line %q after $defs.server", propsLine)
	}
	end := props + 1 + slices.Index(lines[props+1:], propsEnd)
	if end <= props {
		return nil, fmt.Errorf("no line %q closing $defs.server.properties", propsEnd)
	}
	start := -1
	for i := props + 1; i < end; i++ {
		if strings.HasPrefix(lines[i], kindPrefix) {
			start = i
			break
		}
	}
	if start < 0 {
		return nil, fmt.Errorf("$defs.server.properties has no line starting %q, where the generated part begins", kindPrefix)
	}
	if err := checkOwned(lines[start:end], ks); err != nil {
		return nil, err
	}
	gen, err := generated(ks)
	if err != nil {
		return nil, err
	}
	out := slices.Concat(lines[:start], gen, lines[end:])
	data := []byte(strings.Join(out, "\n"))
	if !json.Valid(data) {
		return nil, fmt.Errorf("the result is not JSON (does the member above %q end with a comma?)", strings.TrimSpace(kindPrefix))
	}
	return data, nil
}

// checkOwned refuses to overwrite a server property written by hand in
// the generated part: its members may only be kind and kind blocks (of
// the kinds the file lists, or of ks).
func checkOwned(part []string, ks []kinds.Kind) error {
	var members map[string]json.RawMessage
	text := "{" + strings.TrimSuffix(strings.TrimSpace(strings.Join(part, "\n")), ",") + "}"
	if err := json.Unmarshal([]byte(text), &members); err != nil {
		return fmt.Errorf("the generated part of $defs.server.properties is not JSON members: %w", err)
	}
	var kind struct {
		Enum []string `json:"enum"`
	}
	_ = json.Unmarshal(members["kind"], &kind)
	owned := map[string]bool{"kind": true}
	for _, n := range kind.Enum {
		owned[n] = true
	}
	for _, k := range ks {
		owned[k.Name()] = true
	}
	for name := range members {
		if !owned[name] {
			return fmt.Errorf("server property %q is in the generated part (from \"kind\" to the end of $defs.server.properties); move it above \"kind\"", name)
		}
	}
	return nil
}

// generated returns the lines of the generated part.
func generated(ks []kinds.Kind) ([]string, error) {
	var about, names []string
	var blocks []string
	for _, k := range ks {
		f := k.Facts()
		if f.About == "" {
			return nil, fmt.Errorf("kind %s: Facts().About is empty", k.Name())
		}
		about = append(about, fmt.Sprintf("%s (%s)", k.Name(), f.About))
		names = append(names, quote(k.Name()))
		if f.Settings == nil {
			continue
		}
		b, err := block(k.Name(), f.Settings)
		if err != nil {
			return nil, err
		}
		blocks = append(blocks, b)
	}
	desc := "Service kind: " + about[0]
	if n := len(about); n > 1 {
		desc = "Service kind: " + strings.Join(about[:n-1], ", ") + " or " + about[n-1]
	}
	kind := fmt.Sprintf(`%s{"description": %s, "enum": [%s]}`, kindPrefix, quote(desc+"."), strings.Join(names, ", "))
	members := append([]string{kind}, blocks...)
	return strings.Split(strings.Join(members, ",\n"), "\n"), nil
}

// block is the member "name": settings, the kind's schema as its author
// laid it out, indented to its place.
func block(name string, settings []byte) (string, error) {
	var obj map[string]any
	if err := json.Unmarshal(settings, &obj); err != nil {
		return "", fmt.Errorf("kind %s: Facts().Settings is not a JSON object: %w", name, err)
	}
	lines := strings.Split(strings.TrimSpace(string(settings)), "\n")
	for i := 1; i < len(lines); i++ {
		if lines[i] = strings.TrimRight(lines[i], " \t\r"); lines[i] != "" {
			lines[i] = indent + lines[i]
		}
	}
	return indent + quote(name) + ": " + strings.Join(lines, "\n"), nil
}

// quote is s as a JSON string, <, > and & as they are.
func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// goFacts returns kinds_gen.go: what the scenario resolves with.
func goFacts(ks []kinds.Kind) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by %s from internal/kinds/all; DO NOT EDIT.\n\n", regenerate)
	fmt.Fprintf(&b, "package schemas\n\n")
	fmt.Fprintf(&b, "// kinds are the service kinds, in their order in internal/kinds/all.\n")
	fmt.Fprintf(&b, "var kinds = []Kind{\n")
	for _, k := range ks {
		f := k.Facts()
		proto := f.Protocol
		if proto == "" {
			proto = plan.ProtocolHTTP
		}
		fmt.Fprintf(&b, "\t{Name: %q, Protocol: %q, InProcess: %t},\n", k.Name(), proto, f.InProcess)
	}
	fmt.Fprintf(&b, "}\n")
	return format.Source(b.Bytes())
}
