//go:build linux

package refserver

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

var shmSeq int

// makeShm creates a POSIX shm object of n bytes and removes it at cleanup.
func makeShm(t *testing.T, n int) (key string, path string) {
	t.Helper()
	shmSeq++
	key = fmt.Sprintf("/refserver_test_%d_%s_%d", os.Getpid(), filepath.Base(t.Name()), shmSeq)
	path = "/dev/shm" + key
	if err := os.WriteFile(path, make([]byte, n), 0o600); err != nil {
		t.Skipf("no /dev/shm: %v", err)
	}
	t.Cleanup(func() { os.Remove(path) })
	return key, path
}

func TestHTTPSharedMemoryRoundTrip(t *testing.T) {
	s := startServer(t, Options{Models: []string{"simple"}})
	inKey, inPath := makeShm(t, 128)
	outKey, outPath := makeShm(t, 128+8)
	in0, in1 := make([]int32, 16), make([]int32, 16)
	for i := range in0 {
		in0[i], in1[i] = int32(i), 1
	}
	if err := os.WriteFile(inPath, append(int32Bytes(in0...), int32Bytes(in1...)...), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		name, key string
		size      int
	}{{"in", inKey, 128}, {"out", outKey, 136}} {
		rep := do(t, s, "POST", "/v2/systemsharedmemory/region/"+r.name+"/register", nil,
			mustJSON(t, map[string]any{"key": r.key, "offset": 0, "byte_size": r.size}))
		if rep.status != 200 {
			t.Fatalf("register %s: %d %s", r.name, rep.status, rep.body)
		}
	}
	rep := do(t, s, "POST", "/v2/systemsharedmemory/region/in/register", nil, mustJSON(t, map[string]any{"key": inKey, "byte_size": 128}))
	if rep.status != 400 {
		t.Errorf("duplicate register: %d %s", rep.status, rep.body)
	}
	shm := func(region string, off, size int) map[string]any {
		return map[string]any{"shared_memory_region": region, "shared_memory_offset": off, "shared_memory_byte_size": size}
	}
	body := mustJSON(t, map[string]any{
		"inputs": []any{
			map[string]any{"name": "INPUT0", "datatype": "INT32", "shape": []int{1, 16}, "parameters": shm("in", 0, 64)},
			map[string]any{"name": "INPUT1", "datatype": "INT32", "shape": []int{1, 16}, "parameters": shm("in", 64, 64)},
		},
		"outputs": []any{
			map[string]any{"name": "OUTPUT0", "parameters": shm("out", 0, 64)},
			map[string]any{"name": "OUTPUT1", "parameters": shm("out", 72, 64)},
		},
	})
	rep = do(t, s, "POST", "/v2/models/simple/infer", nil, body)
	if rep.status != 200 {
		t.Fatalf("infer: %d %s", rep.status, rep.body)
	}
	got, err := os.ReadFile(outPath)
	if err != nil {
		t.Fatal(err)
	}
	sum, diff := make([]int32, 16), make([]int32, 16)
	for i := range sum {
		sum[i], diff[i] = int32(i+1), int32(i-1)
	}
	if !bytes.Equal(got[:64], int32Bytes(sum...)) || !bytes.Equal(got[72:], int32Bytes(diff...)) || !bytes.Equal(got[64:72], make([]byte, 8)) {
		t.Fatalf("output region %v", got)
	}

	for _, tc := range []struct {
		name   string
		params map[string]any
		want   string
	}{
		{"out of range", shm("in", 100, 64), "outside its 128 bytes"},
		{"negative offset", shm("in", -4, 64), "must not be negative"},
		{"unregistered", shm("nope", 0, 64), "Unable to find shared memory region: 'nope'"},
		{"size mismatch", shm("in", 0, 60), "byte size mismatch"},
	} {
		body := mustJSON(t, map[string]any{"inputs": []any{
			map[string]any{"name": "INPUT0", "datatype": "INT32", "shape": []int{1, 16}, "parameters": tc.params},
			map[string]any{"name": "INPUT1", "datatype": "INT32", "shape": []int{1, 16}, "parameters": shm("in", 64, 64)},
		}})
		rep := do(t, s, "POST", "/v2/models/simple/infer", nil, body)
		if rep.status != 400 || !bytes.Contains(rep.body, []byte(tc.want)) {
			t.Errorf("%s: %d %s, want 400 containing %q", tc.name, rep.status, rep.body, tc.want)
		}
	}

	rep = do(t, s, "GET", "/v2/systemsharedmemory/status", nil, nil)
	if !bytes.Contains(rep.body, []byte(`"key":"`+inKey+`"`)) || !bytes.Contains(rep.body, []byte(`"byte_size":136`)) {
		t.Errorf("status %s", rep.body)
	}
	rep = do(t, s, "POST", "/v2/systemsharedmemory/unregister", nil, nil)
	if rep.status != 200 {
		t.Fatalf("unregister all: %d", rep.status)
	}
	rep = do(t, s, "GET", "/v2/systemsharedmemory/status", nil, nil)
	if string(rep.body) != "[]" {
		t.Errorf("status after unregister: %s", rep.body)
	}
}

func TestShmRegisterRejects(t *testing.T) {
	r := newShmRegistry()
	key, _ := makeShm(t, 4096)
	for _, tc := range []struct {
		key       string
		off, size uint64
	}{
		{key, 0, 4097},
		{key, 4096, 1},
		{"/../etc/passwd", 0, 1},
		{"/refserver_no_such_object", 0, 1},
		{key, 0, 0},
	} {
		if err := r.register("r", tc.key, tc.off, tc.size); err == nil {
			r.unregister("r")
			t.Errorf("register(%q, %d, %d) succeeded", tc.key, tc.off, tc.size)
		}
	}
	// An unaligned register offset still maps the right bytes.
	_, path := makeShm(t, 8192)
	data := make([]byte, 8192)
	for i := range data {
		data[i] = byte(i % 251)
	}
	os.WriteFile(path, data, 0o600)
	if err := r.register("u", "/"+filepath.Base(path), 4100, 10); err != nil {
		t.Fatal(err)
	}
	got, err := r.read(shmRef{region: "u", offset: 2, size: 8})
	if err != nil || !bytes.Equal(got, data[4102:4110]) {
		t.Fatalf("read %v %v, want %v", got, err, data[4102:4110])
	}
	r.closeAll()
	if _, err := r.read(shmRef{region: "u", size: 1}); err == nil {
		t.Fatal("read after unregister succeeded")
	}
}
