package grpc

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

const protoDir = "testdata/protos"

func protoConfig(files []string, importPaths ...string) *config {
	c := &config{field: "server.grpc", protoFiles: files, importPaths: importPaths}
	c.protoPaths = append(c.protoPaths, files...)
	return c
}

func TestCompileProtosImportsAsProtoc(t *testing.T) {
	vendor, service := filepath.Join(protoDir, "vendor"), filepath.Join(protoDir, "service")
	cases := []struct {
		name  string
		files []string
	}{
		// A path on disk under an import path, as protoc takes it.
		{"disk path", []string{filepath.Join(service, "places/v1/places.proto")}},
		// A name relative to an import path, as protoc takes it too.
		{"import name", []string{"places/v1/places.proto"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			files, err := compileProtos(context.Background(), protoConfig(tc.files, vendor, service))
			if err != nil {
				t.Fatal(err)
			}
			md, err := findMethod(files, methodName{"places.v1.Places", "Nearest"}, "the .proto files")
			if err != nil {
				t.Fatal(err)
			}
			if got := md.Input().Fields().ByName("location").Message().FullName(); got != "geo.type.LatLng" {
				t.Errorf("location is %s", got)
			}
			if got := md.Input().Fields().ByName("at").Message().ParentFile().Path(); got != "google/protobuf/timestamp.proto" {
				t.Errorf("at comes from %s", got)
			}
			var paths []string
			files.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
				paths = append(paths, fd.Path())
				return true
			})
			slices.Sort(paths)
			want := []string{"geo/type/latlng.proto", "google/protobuf/timestamp.proto", "places/v1/places.proto"}
			if !slices.Equal(paths, want) {
				t.Errorf("files %v, want %v", paths, want)
			}
		})
	}
}

// protoc itself, where installed, names the files and resolves the
// imports the same way.
func TestCompileProtosMatchesProtoc(t *testing.T) {
	protoc, err := exec.LookPath("protoc")
	if err != nil {
		t.Skip("SKIP: protoc is not installed; the comparison with protoc's own import resolution did not run")
	}
	vendor, service := filepath.Join(protoDir, "vendor"), filepath.Join(protoDir, "service")
	out := filepath.Join(t.TempDir(), "set.pb")
	cmd := exec.Command(protoc, "-I", vendor, "-I", service, "--include_imports", "--descriptor_set_out", out,
		filepath.Join(service, "places/v1/places.proto"))
	if b, err := cmd.CombinedOutput(); err != nil {
		if strings.Contains(string(b), "google/protobuf/timestamp.proto: File not found") {
			// Debian ships protoc's well-known types apart from it.
			t.Skip("SKIP: protoc is installed without its well-known types (apt-get install libprotobuf-dev); the comparison with protoc's own import resolution did not run")
		}
		t.Fatalf("protoc: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(b, &set); err != nil {
		t.Fatal(err)
	}
	theirs, err := protodesc.NewFiles(&set)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := compileProtos(context.Background(), protoConfig([]string{filepath.Join(service, "places/v1/places.proto")}, vendor, service))
	if err != nil {
		t.Fatal(err)
	}
	theirs.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		o, err := ours.FindFileByPath(fd.Path())
		if err != nil {
			t.Errorf("protoc has %s, we do not", fd.Path())
			return true
		}
		a, b := protodesc.ToFileDescriptorProto(fd), protodesc.ToFileDescriptorProto(o)
		a.SourceCodeInfo, b.SourceCodeInfo = nil, nil
		if !proto.Equal(a, b) {
			t.Errorf("%s differs from protoc's:\nprotoc: %v\nours:   %v", fd.Path(), a, b)
		}
		return true
	})
}

func TestCompileProtosErrors(t *testing.T) {
	vendor, service, bad := filepath.Join(protoDir, "vendor"), filepath.Join(protoDir, "service"), filepath.Join(protoDir, "bad")
	cases := []struct {
		name        string
		files       []string
		importPaths []string
		want        []string
	}{
		{"syntax error at file:line:col", []string{filepath.Join(bad, "bad.proto")}, []string{bad},
			[]string{filepath.Join(bad, "bad.proto") + ":7:3: syntax error"}},
		{"missing import", []string{filepath.Join(bad, "undefined.proto")}, []string{bad, vendor},
			[]string{filepath.Join(bad, "undefined.proto") + ":5:8: import \"geo/type/nowhere.proto\" not found in the import paths"}},
		{"outside the import paths", []string{filepath.Join(service, "places/v1/places.proto")}, []string{vendor},
			[]string{"proto_files[0]", "does not lie under any import path"}},
		{"no such file", []string{"nowhere.proto"}, []string{vendor},
			[]string{"proto_files[0]: nowhere.proto: no such file"}},
		{"a folder", []string{vendor}, []string{vendor}, []string{"is a folder"}},
		{"shadowed by an earlier import path", []string{filepath.Join(vendor, "geo/type/latlng.proto")},
			[]string{filepath.Join(protoDir, "shadow/a"), vendor}, []string{"is shadowed by", "reorder import_paths"}},
		{"import not found without its path", []string{filepath.Join(service, "places/v1/places.proto")}, []string{service},
			[]string{"places.proto:8:8: import \"geo/type/latlng.proto\" not found"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := compileProtos(context.Background(), protoConfig(tc.files, tc.importPaths...))
			if err == nil {
				t.Fatal("compiled")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

// writeProtoset compiles the places service and writes it as a
// FileDescriptorSet, without the well-known types when bare.
func writeProtoset(t *testing.T, bare bool) string {
	t.Helper()
	files, err := compileProtos(context.Background(), protoConfig([]string{"places/v1/places.proto"},
		filepath.Join(protoDir, "vendor"), filepath.Join(protoDir, "service")))
	if err != nil {
		t.Fatal(err)
	}
	var set descriptorpb.FileDescriptorSet
	files.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if !bare || !strings.HasPrefix(fd.Path(), "google/") {
			set.File = append(set.File, protodesc.ToFileDescriptorProto(fd))
		}
		return true
	})
	b, err := proto.Marshal(&set)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "places.protoset")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadProtoset(t *testing.T) {
	for _, bare := range []bool{false, true} {
		files, err := loadProtoset(&config{field: "server.grpc", protoset: writeProtoset(t, bare)})
		if err != nil {
			t.Fatalf("bare=%v: %v", bare, err)
		}
		if _, err := findMethod(files, methodName{"places.v1.Places", "Within"}, "the protoset"); err != nil {
			t.Errorf("bare=%v: %v", bare, err)
		}
	}
	junk := filepath.Join(t.TempDir(), "junk.protoset")
	if err := os.WriteFile(junk, []byte("not a descriptor set"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadProtoset(&config{field: "server.grpc", protoset: junk}); err == nil || !strings.Contains(err.Error(), "is not a FileDescriptorSet") {
		t.Errorf("junk protoset: %v", err)
	}
}

func TestFindMethodLists(t *testing.T) {
	files, err := compileProtos(context.Background(), protoConfig([]string{"places/v1/places.proto"},
		filepath.Join(protoDir, "vendor"), filepath.Join(protoDir, "service")))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		m    methodName
		want string
	}{
		{methodName{"places.v1.Places", "Farthest"}, "service places.v1.Places has no method Farthest (methods: Nearest, Within (server streaming), Visit (client streaming))"},
		{methodName{"places.v1.Plazas", "Nearest"}, "no service places.v1.Plazas in the .proto files (services: places.v1.Places)"},
		{methodName{"places.v1.Place", "Nearest"}, "places.v1.Place in the .proto files is not a service"},
	}
	for _, tc := range cases {
		_, err := findMethod(files, tc.m, "the .proto files")
		if err == nil || err.Error() != tc.want && !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.m, err, tc.want)
		}
	}
	var _ *protoregistry.Files = files
}
