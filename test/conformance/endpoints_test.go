package conformance

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/kinds/kserve/client"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/internal/tensor"
	"github.com/perfscen/perfscen/internal/transport"
)

func TestEndpoints(t *testing.T) {
	for _, proto := range protocols {
		t.Run(proto, func(t *testing.T) {
			s := start(t, refserver.Options{Models: []string{"simple", "identity_fp32"}})
			c := newClient(t, s, proto)
			ctx := ctxT(t)
			if live, err := c.ServerLive(ctx); !live || err != nil {
				t.Errorf("live %v %v", live, err)
			}
			if ready, err := c.ServerReady(ctx); !ready || err != nil {
				t.Errorf("ready %v %v", ready, err)
			}
			md, err := c.ServerMetadata(ctx)
			if err != nil || md.Name != refserver.ServerName {
				t.Fatalf("server metadata %+v %v", md, err)
			}
			for _, ext := range []string{"binary_tensor_data", "statistics", "system_shared_memory", "model_configuration", "model_repository", "schedule_policy", "sequence"} {
				if !slices.Contains(md.Extensions, ext) {
					t.Errorf("extension %s missing from %v", ext, md.Extensions)
				}
			}
			mm, err := c.ModelMetadata(ctx, "simple", "")
			if err != nil || len(mm.Inputs) != 2 || !slices.Equal(mm.Inputs[0].Shape, []int64{-1, 16}) || mm.Inputs[0].DataType != tensor.INT32 || !slices.Equal(mm.Versions, []string{"1"}) {
				t.Errorf("model metadata %+v %v", mm, err)
			}
			if ok, err := c.ModelReady(ctx, "simple", "1"); !ok || err != nil {
				t.Errorf("simple ready %v %v", ok, err)
			}
			if ok, err := c.ModelReady(ctx, "delay", ""); ok || err != nil {
				t.Errorf("delay (not loaded) ready %v %v", ok, err)
			}
			cfg, err := c.ModelConfig(ctx, "identity_fp32", "")
			if err != nil || cfg.MaxBatchSize != 8 {
				t.Errorf("config %+v %v", cfg, err)
			}
			idx, err := c.RepositoryIndex(ctx)
			if err != nil || len(idx) != len(refserver.BuiltinModels()) {
				t.Errorf("index %+v %v", idx, err)
			}
			if err := c.LoadModel(ctx, "delay"); err != nil {
				t.Fatal(err)
			}
			if ok, _ := c.ModelReady(ctx, "delay", ""); !ok {
				t.Error("delay not ready after load")
			}
			if err := c.UnloadModel(ctx, "delay"); err != nil {
				t.Fatal(err)
			}
			if ok, _ := c.ModelReady(ctx, "delay", ""); ok {
				t.Error("delay ready after unload")
			}
			stats, err := c.ModelStatistics(ctx, "", "")
			if err != nil || len(stats) != 2 {
				t.Errorf("statistics %+v %v", stats, err)
			}
			if _, err := c.SystemSharedMemoryStatus(ctx, ""); err != nil {
				t.Errorf("shm status %v", err)
			}
			// The request reaches the server, which has no GPU (as the
			// real Triton on a CPU-only build answers).
			var se *transport.ServerError
			if err := c.RegisterCUDASharedMemory(ctx, "x", make([]byte, 64), 0, 64); !errors.As(err, &se) || !strings.Contains(se.Message, "GPUs not supported") {
				t.Errorf("cuda register: %v", err)
			}
			if err := c.(client.CUDAUnregisterer).UnregisterCUDASharedMemory(ctx, ""); err != nil {
				t.Errorf("cuda unregister: %v", err)
			}
		})
	}
}
