package grpc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// The reflection service's paths: v1, and v1alpha, which older servers
// offer alone. Their messages are the same on the wire, so one client
// serves both.
var reflectionPaths = []string{
	"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
	"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
}

// errNoReflection says the server offers no reflection service.
var errNoReflection = errors.New("the server offers no server reflection (grpc.reflection.v1 or v1alpha)")

// serviceNotServed is a service the server does not list.
type serviceNotServed struct {
	service string
	served  []string
}

func (e *serviceNotServed) Error() string {
	return fmt.Sprintf("the server does not serve %s (its reflection lists: %s)", e.service, strings.Join(e.served, ", "))
}

// reflectionClient asks one server reflection stream.
type reflectionClient struct {
	stream grpc.ClientStream
}

func openReflection(ctx context.Context, conn grpc.ClientConnInterface) (*reflectionClient, []string, error) {
	desc := &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}
	var last error
	for _, path := range reflectionPaths {
		st, err := conn.NewStream(ctx, desc, path)
		if err != nil {
			return nil, nil, err
		}
		rc := &reflectionClient{stream: st}
		resp, err := rc.ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_ListServices{ListServices: "*"}})
		if status.Code(err) == codes.Unimplemented {
			last = err
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		var names []string
		for _, s := range resp.GetListServicesResponse().GetService() {
			names = append(names, s.GetName())
		}
		slices.Sort(names)
		return rc, names, nil
	}
	return nil, nil, fmt.Errorf("%w: %v", errNoReflection, last)
}

func (rc *reflectionClient) ask(req *rpb.ServerReflectionRequest) (*rpb.ServerReflectionResponse, error) {
	if err := rc.stream.SendMsg(req); err != nil {
		// The status is what RecvMsg returns.
		resp := new(rpb.ServerReflectionResponse)
		if rerr := rc.stream.RecvMsg(resp); rerr != nil {
			return nil, rerr
		}
		return nil, err
	}
	resp := new(rpb.ServerReflectionResponse)
	if err := rc.stream.RecvMsg(resp); err != nil {
		return nil, err
	}
	if e := resp.GetErrorResponse(); e != nil {
		return nil, status.Error(codes.Code(e.GetErrorCode()), e.GetErrorMessage())
	}
	return resp, nil
}

func (rc *reflectionClient) close() { _ = rc.stream.CloseSend() }

// files asks for the files that define services and, one by one, any
// file they import that the server did not send along.
func (rc *reflectionClient) files(services []string) (*protoregistry.Files, error) {
	set := &descriptorpb.FileDescriptorSet{}
	have := map[string]bool{}
	add := func(resp *rpb.ServerReflectionResponse) error {
		for _, b := range resp.GetFileDescriptorResponse().GetFileDescriptorProto() {
			fd := new(descriptorpb.FileDescriptorProto)
			if err := proto.Unmarshal(b, fd); err != nil {
				return fmt.Errorf("reflection sent a file descriptor that does not decode: %w", err)
			}
			if !have[fd.GetName()] {
				have[fd.GetName()] = true
				set.File = append(set.File, fd)
			}
		}
		return nil
	}
	for _, s := range services {
		resp, err := rc.ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: s}})
		if err != nil {
			return nil, fmt.Errorf("reflection: the file defining %s: %w", s, err)
		}
		if err := add(resp); err != nil {
			return nil, err
		}
	}
	for i := 0; i < len(set.File); i++ {
		for _, dep := range set.File[i].GetDependency() {
			if have[dep] {
				continue
			}
			resp, err := rc.ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_FileByFilename{FileByFilename: dep}})
			if err != nil {
				// A server may leave out the well-known types; perfscen
				// has them.
				if fd, gerr := protoregistry.GlobalFiles.FindFileByPath(dep); gerr == nil && strings.HasPrefix(dep, "google/protobuf/") {
					have[dep] = true
					set.File = append(set.File, protodesc.ToFileDescriptorProto(fd))
					continue
				}
				return nil, fmt.Errorf("reflection: file %s (imported by %s): %w", dep, set.File[i].GetName(), err)
			}
			if err := add(resp); err != nil {
				return nil, err
			}
			if !have[dep] {
				return nil, fmt.Errorf("reflection: asked for file %s, the server sent others", dep)
			}
		}
	}
	files, err := protodesc.NewFiles(set)
	if err != nil {
		return nil, fmt.Errorf("reflection: the server's descriptors do not link: %w", err)
	}
	return files, nil
}

// reflect fetches the descriptors of services from the server.
func reflect(ctx context.Context, conn grpc.ClientConnInterface, services []string) (*protoregistry.Files, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rc, served, err := openReflection(ctx, conn)
	if err != nil {
		return nil, err
	}
	defer rc.close()
	for _, s := range services {
		if !slices.Contains(served, s) {
			return nil, &serviceNotServed{service: s, served: served}
		}
	}
	return rc.files(services)
}

// servedServices lists the services the server's reflection names; nil
// when it offers none.
func servedServices(ctx context.Context, conn grpc.ClientConnInterface) []string {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rc, served, err := openReflection(ctx, conn)
	if err != nil {
		return nil
	}
	rc.close()
	return served
}
