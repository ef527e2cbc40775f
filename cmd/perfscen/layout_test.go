package main

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every folder with Go code a person wrote has its line in the README's
// Layout table, so a new package cannot land unexplained (a dozen were
// missing before). Folders holding only generated code (gRPC stubs) are
// named in their parent's line instead.
func TestReadmeLayoutNamesEveryPackage(t *testing.T) {
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := bytes.Cut(readme, []byte("\n## Layout\n"))
	if !ok {
		t.Fatal("README.md has no Layout section")
	}
	named := map[string]bool{}
	cell := regexp.MustCompile("`([a-z0-9_/.-]+)`")
	sc := bufio.NewScanner(bytes.NewReader(table))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			break
		}
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first := strings.SplitN(line, "|", 3)[1]
		for _, m := range cell.FindAllStringSubmatch(first, -1) {
			named[m[1]] = true
		}
	}
	dirs := map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != root || d.Name() == "bin" || d.Name() == "out") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(src, []byte("// Code generated")) && bytes.Contains(src, []byte("DO NOT EDIT.")) {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		dirs[filepath.ToSlash(rel)] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 40 {
		t.Fatalf("found only %d Go folders; is the walk wrong?", len(dirs))
	}
	for d := range dirs {
		if !named[d] {
			t.Errorf("README.md's Layout table has no line for %s", d)
		}
	}
}
