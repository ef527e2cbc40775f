//go:build linux

package conformance

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"github.com/perfscen/perfscen/internal/kinds/kserve/client"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/internal/tensor"
)

// createShm makes a POSIX shared-memory object as a client would
// (shm_open + ftruncate) and unlinks it at cleanup.
func createShm(t *testing.T, tag string, size int) (key, path string) {
	t.Helper()
	key = fmt.Sprintf("/perfscen_conformance_%d_%s", os.Getpid(), tag)
	path = "/dev/shm" + key
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Skipf("cannot create shared memory: %v", err)
	}
	defer f.Close()
	if err := f.Truncate(int64(size)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(path) })
	return key, path
}

func TestSharedMemoryRoundTrip(t *testing.T) {
	for _, k := range transports {
		t.Run(k.String(), func(t *testing.T) {
			s := start(t, refserver.Options{Models: []string{"simple"}})
			c, infer := connect(t, s, k)
			proto := k.String()
			ctx := ctxT(t)
			inKey, inPath := createShm(t, proto+"_in", 128)
			outKey, outPath := createShm(t, proto+"_out", 128)
			in0 := seq(16, func(i int) int32 { return int32(i) })
			in1 := seq(16, func(int) int32 { return 1 })
			if err := os.WriteFile(inPath, append(i32(in0...), i32(in1...)...), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := c.RegisterSystemSharedMemory(ctx, "input_data", inKey, 0, 128); err != nil {
				t.Fatal(err)
			}
			if err := c.RegisterSystemSharedMemory(ctx, "output_data", outKey, 0, 128); err != nil {
				t.Fatal(err)
			}
			st, err := c.SystemSharedMemoryStatus(ctx, "")
			if err != nil || len(st) != 2 {
				t.Fatalf("status %+v %v", st, err)
			}
			shmIn := func(name string, off uint64) client.Input {
				return client.Input{Tensor: tensor.Tensor{Name: name, DataType: tensor.INT32, Shape: []int64{1, 16}},
					Shm: &client.ShmRef{Region: "input_data", Offset: off, ByteSize: 64}}
			}
			resp, err := infer(ctx, &client.InferRequest{Model: "simple",
				Inputs: []client.Input{shmIn("INPUT0", 0), shmIn("INPUT1", 64)},
				Outputs: []client.RequestedOutput{
					{Name: "OUTPUT0", Shm: &client.ShmRef{Region: "output_data", Offset: 0, ByteSize: 64}},
					{Name: "OUTPUT1", Shm: &client.ShmRef{Region: "output_data", Offset: 64, ByteSize: 64}},
				}})
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.Outputs) != 2 || resp.Outputs[0].Raw != nil {
				t.Fatalf("outputs %+v", resp.Outputs)
			}
			got, err := os.ReadFile(outPath)
			if err != nil {
				t.Fatal(err)
			}
			want := append(i32(seq(16, func(i int) int32 { return int32(i + 1) })...), i32(seq(16, func(i int) int32 { return int32(i - 1) })...)...)
			if !bytes.Equal(got, want) {
				t.Fatalf("output region %v", got)
			}
			if err := c.UnregisterSystemSharedMemory(ctx, "input_data"); err != nil {
				t.Fatal(err)
			}
			if _, err := infer(ctx, &client.InferRequest{Model: "simple", Inputs: []client.Input{shmIn("INPUT0", 0), shmIn("INPUT1", 64)}}); err == nil {
				t.Fatal("infer from an unregistered region succeeded")
			}
			if err := c.UnregisterSystemSharedMemory(ctx, ""); err != nil {
				t.Fatal(err)
			}
			if st, _ := c.SystemSharedMemoryStatus(ctx, ""); len(st) != 0 {
				t.Fatalf("regions left: %+v", st)
			}
		})
	}
}
