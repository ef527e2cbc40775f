//go:build linux

package tritoncapi

import (
	"fmt"
	"os"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// The C API version this code was written for (tritonserver.h of core
// r24.05). A library of the same major version and a minor version at
// least this is compatible, as the header says.
const (
	apiMajor = 1
	apiMinor = 31
)

// The C enums and flags perfscen uses (tritonserver.h).
const (
	memoryCPU = 0 // TRITONSERVER_MEMORY_CPU

	modelControlExplicit = 2 // TRITONSERVER_MODEL_CONTROL_EXPLICIT

	requestFlagSequenceStart = 1 // TRITONSERVER_REQUEST_FLAG_SEQUENCE_START
	requestFlagSequenceEnd   = 2 // TRITONSERVER_REQUEST_FLAG_SEQUENCE_END
	responseCompleteFinal    = 1 // TRITONSERVER_RESPONSE_COMPLETE_FINAL
)

// lib is libtritonserver.so, opened at run time: one perfscen binary
// serves every kind, and machines without Triton never load it. Only the
// functions perfscen calls are looked up.
type lib struct {
	path   string
	handle uintptr
	fn     map[string]uintptr

	// errorMessage goes through purego's typed binding, which copies
	// the C string.
	errorMessage func(err uintptr) string

	malloc, free uintptr // libc's, for output buffers Triton writes into
	// libc's POSIX semaphores: a caller waits for its responses in
	// sem_timedwait and Triton's thread wakes it with sem_post, one
	// futex wake from thread to thread, as a C client waits.
	semInit, semPost, semTimedwait uintptr
}

// symbols are the C API functions perfscen calls.
var symbols = []string{
	"TRITONSERVER_ApiVersion",
	"TRITONSERVER_ErrorNew",
	"TRITONSERVER_ErrorDelete",
	"TRITONSERVER_ErrorCode",
	"TRITONSERVER_ErrorMessage",
	"TRITONSERVER_ResponseAllocatorNew",
	"TRITONSERVER_ResponseAllocatorDelete",
	"TRITONSERVER_MessageSerializeToJson",
	"TRITONSERVER_MessageDelete",
	"TRITONSERVER_InferenceRequestNew",
	"TRITONSERVER_InferenceRequestDelete",
	"TRITONSERVER_InferenceRequestSetCorrelationId",
	"TRITONSERVER_InferenceRequestSetFlags",
	"TRITONSERVER_InferenceRequestAddInput",
	"TRITONSERVER_InferenceRequestAppendInputData",
	"TRITONSERVER_InferenceRequestSetReleaseCallback",
	"TRITONSERVER_InferenceRequestSetResponseCallback",
	"TRITONSERVER_InferenceRequestCancel",
	"TRITONSERVER_InferenceResponseDelete",
	"TRITONSERVER_InferenceResponseError",
	"TRITONSERVER_InferenceResponseOutputCount",
	"TRITONSERVER_InferenceResponseOutput",
	"TRITONSERVER_ServerOptionsNew",
	"TRITONSERVER_ServerOptionsDelete",
	"TRITONSERVER_ServerOptionsSetServerId",
	"TRITONSERVER_ServerOptionsSetModelRepositoryPath",
	"TRITONSERVER_ServerOptionsSetModelControlMode",
	"TRITONSERVER_ServerOptionsSetStrictModelConfig",
	"TRITONSERVER_ServerOptionsSetStrictReadiness",
	"TRITONSERVER_ServerOptionsSetBackendDirectory",
	"TRITONSERVER_ServerOptionsSetLogInfo",
	"TRITONSERVER_ServerOptionsSetLogWarn",
	"TRITONSERVER_ServerOptionsSetLogError",
	"TRITONSERVER_ServerOptionsSetLogVerbose",
	"TRITONSERVER_ServerOptionsSetLogFile",
	"TRITONSERVER_ServerOptionsSetMetrics",
	"TRITONSERVER_ServerOptionsSetExitTimeout",
	"TRITONSERVER_ServerOptionsSetPinnedMemoryPoolByteSize",
	"TRITONSERVER_ServerOptionsSetModelLoadRetryCount",
	"TRITONSERVER_ServerNew",
	"TRITONSERVER_ServerDelete",
	"TRITONSERVER_ServerStop",
	"TRITONSERVER_ServerModelIsReady",
	"TRITONSERVER_ServerMetadata",
	"TRITONSERVER_ServerModelConfig",
	"TRITONSERVER_ServerModelStatistics",
	"TRITONSERVER_ServerLoadModel",
	"TRITONSERVER_ServerUnloadModel",
	"TRITONSERVER_ServerInferAsync",
}

var (
	libMu     sync.Mutex
	libLoaded *lib
)

// openLib opens the library at path once per process (a library that
// started servers cannot be unloaded safely) and checks its API version.
// A path that does not exist, a library that is not Triton's C API and an
// incompatible version are each the scenario's mistake.
func openLib(path string) (*lib, error) {
	libMu.Lock()
	defer libMu.Unlock()
	if libLoaded != nil && libLoaded.path == path {
		return libLoaded, nil
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("library %s: %w", path, err)
	}
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", path, err)
	}
	l := &lib{path: path, handle: h, fn: map[string]uintptr{}}
	for _, name := range symbols {
		sym, err := purego.Dlsym(h, name)
		if err != nil {
			return nil, fmt.Errorf("%s is not Triton's C API library (libtritonserver.so): it lacks %s", path, name)
		}
		l.fn[name] = sym
	}
	if libLoaded != nil {
		return nil, fmt.Errorf("%s: this process already runs Triton from %s; one Triton library per process", path, libLoaded.path)
	}
	purego.RegisterFunc(&l.errorMessage, l.fn["TRITONSERVER_ErrorMessage"])
	if err := l.bindLibc(); err != nil {
		return nil, err
	}
	var major, minor uint32
	if err := l.err(l.call("TRITONSERVER_ApiVersion", uintptr(unsafe.Pointer(&major)), uintptr(unsafe.Pointer(&minor)))); err != nil {
		return nil, fmt.Errorf("%s: reading the API version: %w", path, err)
	}
	if major != apiMajor || minor < apiMinor {
		return nil, fmt.Errorf("%s has Triton C API %d.%d; perfscen needs %d.%d or a later %d.x (Triton 2.46 / r24.05 or newer)",
			path, major, minor, apiMajor, apiMinor, apiMajor)
	}
	libLoaded = l
	return l, nil
}

func (l *lib) bindLibc() error {
	h, err := purego.Dlopen("libc.so.6", purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return fmt.Errorf("loading libc: %w", err)
	}
	for _, s := range []struct {
		name string
		to   *uintptr
	}{{"malloc", &l.malloc}, {"free", &l.free}, {"sem_init", &l.semInit}, {"sem_post", &l.semPost}, {"sem_timedwait", &l.semTimedwait}} {
		if *s.to, err = purego.Dlsym(h, s.name); err != nil {
			return fmt.Errorf("libc: %w", err)
		}
	}
	return nil
}

// call calls the C function name. Pointers go as uintptr(unsafe.Pointer(p))
// written in the call expression: uintptrescapes keeps what they point to
// alive and in place until the call returns.
//
//go:uintptrescapes
func (l *lib) call(name string, args ...uintptr) uintptr {
	fn, ok := l.fn[name]
	if !ok {
		panic("tritoncapi: " + name + " is not among the looked-up symbols")
	}
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}

// cstr is s as a NUL-terminated C string (pass &b[0]).
func cstr(s string) []byte { return append([]byte(s), 0) }

// Error is a TRITONSERVER_Error, copied into Go.
type Error struct {
	Code    int // TRITONSERVER_Error_Code
	Message string
}

// Triton's error codes.
const (
	codeUnknown = iota
	codeInternal
	codeNotFound
	codeInvalidArg
	codeUnavailable
	codeUnsupported
	codeAlreadyExists
	codeCancelled
)

var codeNames = []string{"Unknown", "Internal", "NotFound", "InvalidArgument", "Unavailable", "Unsupported", "AlreadyExists", "Cancelled"}

func (e *Error) Error() string { return e.Message }

// CodeName is the code as Triton spells it.
func (e *Error) CodeName() string {
	if e.Code >= 0 && e.Code < len(codeNames) {
		return codeNames[e.Code]
	}
	return fmt.Sprintf("code %d", e.Code)
}

// err turns a returned TRITONSERVER_Error* into an error, deleting it.
func (l *lib) err(e uintptr) error {
	if e == 0 {
		return nil
	}
	out := l.errorOf(e)
	l.call("TRITONSERVER_ErrorDelete", e)
	return out
}

// errorOf reads an error Triton still owns (a response's).
func (l *lib) errorOf(e uintptr) *Error {
	return &Error{Code: int(int32(l.call("TRITONSERVER_ErrorCode", e))), Message: l.errorMessage(e)}
}

// message copies a TRITONSERVER_Message's JSON and deletes it.
func (l *lib) message(msg uintptr) ([]byte, error) {
	var base unsafe.Pointer
	var size uintptr
	if err := l.err(l.call("TRITONSERVER_MessageSerializeToJson", msg, uintptr(unsafe.Pointer(&base)), uintptr(unsafe.Pointer(&size)))); err != nil {
		l.call("TRITONSERVER_MessageDelete", msg)
		return nil, err
	}
	out := append([]byte(nil), unsafe.Slice((*byte)(base), size)...)
	if err := l.err(l.call("TRITONSERVER_MessageDelete", msg)); err != nil {
		return nil, err
	}
	return out, nil
}
