package grpc

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/bufbuild/protocompile"
	"github.com/bufbuild/protocompile/reporter"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// maxProtoErrors caps the compile errors reported at once.
const maxProtoErrors = 10

// compileProtos compiles the scenario's .proto files at run time with
// protocompile, resolving names as protoc does with -I: each input file
// is named by its path under the first import path that holds it, imports
// are searched in the import paths in order, and the well-known types
// protoc ships (google/protobuf/*.proto) come last.
func compileProtos(ctx context.Context, c *config) (*protoregistry.Files, error) {
	names := make([]string, len(c.protoPaths))
	for i, p := range c.protoPaths {
		n, err := virtualName(p, c.protoFiles[i], c.importPaths)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.key(fmt.Sprintf("proto_files[%d]", i)), err)
		}
		names[i] = n
	}
	var errs []string
	rep := reporter.NewReporter(func(e reporter.ErrorWithPos) error {
		if len(errs) < maxProtoErrors {
			errs = append(errs, positioned(e, c.importPaths))
		}
		return nil
	}, nil)
	comp := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: c.importPaths}),
		Reporter: rep,
	}
	linked, err := comp.Compile(ctx, names...)
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s: the .proto files do not compile:\n  %s", c.key("proto_files"), strings.Join(errs, "\n  "))
	}
	if err != nil {
		// A file that cannot be found fails the compile without going
		// through the reporter.
		var ewp reporter.ErrorWithPos
		if errors.As(err, &ewp) {
			return nil, fmt.Errorf("%s: the .proto files do not compile:\n  %s", c.key("proto_files"), positioned(ewp, c.importPaths))
		}
		return nil, fmt.Errorf("%s: %w", c.key("proto_files"), err)
	}
	files := new(protoregistry.Files)
	for _, f := range linked {
		if err := register(files, f); err != nil {
			return nil, fmt.Errorf("%s: %w", c.key("proto_files"), err)
		}
	}
	return files, nil
}

// virtualName is the name protoc gives an input file: its path relative
// to the first import path that contains it. A path that is not a file
// on disk is taken as such a name already (protoc accepts both).
func virtualName(path, written string, importPaths []string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		name := filepath.ToSlash(filepath.Clean(written))
		if !filepath.IsAbs(written) && !strings.HasPrefix(name, "../") {
			for _, ip := range importPaths {
				if st, err := os.Stat(filepath.Join(ip, name)); err == nil && !st.IsDir() {
					return name, nil
				}
			}
		}
		return "", fmt.Errorf("%s: no such file, here or under the import paths (%s)", written, strings.Join(importPaths, ", "))
	}
	if st.IsDir() {
		return "", fmt.Errorf("%s is a folder; name .proto files (their folder goes in import_paths)", written)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	for i, ip := range importPaths {
		aip, err := filepath.Abs(ip)
		if err != nil {
			continue
		}
		rel, err := filepath.Rel(aip, abs)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		name := filepath.ToSlash(rel)
		// protoc refuses an input that an earlier import path shadows:
		// its imports would resolve to the other file.
		for _, earlier := range importPaths[:i] {
			other := filepath.Join(earlier, rel)
			if _, err := os.Stat(other); err == nil {
				return "", fmt.Errorf("%s is shadowed by %s, which import path %s gives the same name %q: reorder import_paths or name that file instead", written, other, earlier, name)
			}
		}
		return name, nil
	}
	return "", fmt.Errorf("%s does not lie under any import path (%s): protoc names each file by its path under one; add its folder to import_paths", written, strings.Join(importPaths, ", "))
}

// positioned writes a compile error as path:line:col: message, with the
// path on disk of the file the import paths resolved.
func positioned(e reporter.ErrorWithPos, importPaths []string) string {
	pos := e.GetPosition()
	file := pos.Filename
	for _, ip := range importPaths {
		if p := filepath.Join(ip, file); fileExists(p) {
			file = p
			break
		}
	}
	msg := e.Unwrap().Error()
	if errors.Is(e.Unwrap(), fs.ErrNotExist) {
		// The resolver's own text names only the last path it tried.
		var pe *fs.PathError
		if errors.As(e.Unwrap(), &pe) {
			if rel, ok := importedName(pe.Path, importPaths); ok {
				msg = fmt.Sprintf("import %q not found in the import paths (%s) nor among the well-known types", rel, strings.Join(importPaths, ", "))
			}
		}
	}
	return fmt.Sprintf("%s:%d:%d: %s", file, pos.Line, pos.Col, msg)
}

func importedName(path string, importPaths []string) (string, bool) {
	for _, ip := range importPaths {
		if rel, err := filepath.Rel(ip, path); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.ToSlash(rel), true
		}
	}
	return "", false
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// register adds f and, first, everything it imports.
func register(files *protoregistry.Files, f protoreflect.FileDescriptor) error {
	if _, err := files.FindFileByPath(f.Path()); err == nil {
		return nil
	}
	imps := f.Imports()
	for i := range imps.Len() {
		if err := register(files, imps.Get(i).FileDescriptor); err != nil {
			return err
		}
	}
	return files.RegisterFile(f)
}

// loadProtoset reads a FileDescriptorSet. Well-known types it imports but
// lacks (a set built without --include_imports) are taken from the ones
// linked into perfscen, as protoc would find them.
func loadProtoset(c *config) (*protoregistry.Files, error) {
	b, err := os.ReadFile(c.protoset)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.key("protoset"), err)
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(b, &set); err != nil {
		return nil, fmt.Errorf("%s: %s is not a FileDescriptorSet (protoc --descriptor_set_out): %w", c.key("protoset"), c.protoset, err)
	}
	if len(set.File) == 0 {
		return nil, fmt.Errorf("%s: %s holds no files", c.key("protoset"), c.protoset)
	}
	have := map[string]bool{}
	for _, f := range set.File {
		have[f.GetName()] = true
	}
	for i := 0; i < len(set.File); i++ {
		for _, dep := range set.File[i].GetDependency() {
			if have[dep] {
				continue
			}
			if fd, err := protoregistry.GlobalFiles.FindFileByPath(dep); err == nil && strings.HasPrefix(dep, "google/protobuf/") {
				set.File = append(set.File, protodesc.ToFileDescriptorProto(fd))
				have[dep] = true
			}
		}
	}
	files, err := protodesc.NewFiles(&set)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w (build the set with protoc --include_imports)", c.key("protoset"), c.protoset, err)
	}
	return files, nil
}
