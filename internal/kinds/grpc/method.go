package grpc

import (
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// methodName is a method as a scenario names it: pkg.Service/Method.
type methodName struct {
	service string // full name, pkg.Service
	method  string
}

// path is the method's HTTP/2 path, as gRPC sends it.
func (m methodName) path() string { return "/" + m.service + "/" + m.method }

func (m methodName) String() string { return m.service + "/" + m.method }

// parseMethod reads pkg.Service/Method; a leading / (the wire path) is
// accepted too.
func parseMethod(s string) (methodName, error) {
	t := strings.TrimPrefix(s, "/")
	svc, meth, ok := strings.Cut(t, "/")
	if !ok || svc == "" || meth == "" || strings.Contains(meth, "/") {
		return methodName{}, fmt.Errorf("%q is not a method: write package.Service/Method", s)
	}
	if !protoreflect.FullName(svc).IsValid() || !protoreflect.Name(meth).IsValid() {
		return methodName{}, fmt.Errorf("%q is not a method: write package.Service/Method (names of letters, digits and _)", s)
	}
	return methodName{service: svc, method: meth}, nil
}

// findMethod looks m up in files; the errors list what there is instead:
// the service's methods, or the services the files define.
func findMethod(files *protoregistry.Files, m methodName, where string) (protoreflect.MethodDescriptor, error) {
	d, err := files.FindDescriptorByName(protoreflect.FullName(m.service))
	if err != nil {
		return nil, fmt.Errorf("no service %s in %s%s", m.service, where, listOrNone(" (services: %s)", servicesIn(files)))
	}
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		return nil, fmt.Errorf("%s in %s is not a service%s", m.service, where, listOrNone(" (services: %s)", servicesIn(files)))
	}
	md := sd.Methods().ByName(protoreflect.Name(m.method))
	if md == nil {
		return nil, fmt.Errorf("service %s has no method %s (methods: %s)", m.service, m.method, strings.Join(methodsOf(sd), ", "))
	}
	return md, nil
}

// methodsOf lists a service's methods with their streaming shape.
func methodsOf(sd protoreflect.ServiceDescriptor) []string {
	var out []string
	for i := range sd.Methods().Len() {
		md := sd.Methods().Get(i)
		out = append(out, string(md.Name())+shapeNote(md))
	}
	return out
}

// shapeNote says how a method streams, for lists of methods.
func shapeNote(md protoreflect.MethodDescriptor) string {
	switch {
	case md.IsStreamingClient() && md.IsStreamingServer():
		return " (bidi streaming)"
	case md.IsStreamingClient():
		return " (client streaming)"
	case md.IsStreamingServer():
		return " (server streaming)"
	}
	return ""
}

func servicesIn(files *protoregistry.Files) []string {
	var out []string
	files.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		for i := range fd.Services().Len() {
			out = append(out, string(fd.Services().Get(i).FullName()))
		}
		return true
	})
	slices.Sort(out)
	return out
}

func listOrNone(format string, items []string) string {
	if len(items) == 0 {
		return " (it defines no services)"
	}
	return fmt.Sprintf(format, strings.Join(items, ", "))
}
