package torchserve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/perfscen/perfscen/internal/refserver"
)

// management serves GET /models and GET /models/{model}[/{version}],
// describing each built-in model as TorchServe does, with one READY
// worker per model instance (instance_count).
func (f *frontend) management(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimSuffix(r.URL.Path, "/")
	if path != "/models" && !strings.HasPrefix(path, "/models/") {
		notFound(w)
		return
	}
	if r.Method != http.MethodGet {
		methodNotAllowed(w)
		return
	}
	if path == "/models" {
		f.listModels(w)
		return
	}
	parts := strings.Split(strings.TrimPrefix(path, "/models/"), "/")
	if len(parts) > 2 {
		notFound(w)
		return
	}
	info, ok := f.served(parts[0])
	if !ok {
		writeError(w, http.StatusNotFound, "ModelNotFoundException", "Model not found: "+parts[0])
		return
	}
	if len(parts) == 2 && parts[1] != info.Version && parts[1] != "all" {
		writeError(w, http.StatusNotFound, "ModelVersionNotFoundException", fmt.Sprintf("Model version: %s does not exist for model: %s", parts[1], parts[0]))
		return
	}
	writeJSON(w, []describeReply{f.describe(info)})
}

type modelEntry struct {
	ModelName string `json:"modelName"`
	ModelURL  string `json:"modelUrl"`
}

func (f *frontend) listModels(w http.ResponseWriter) {
	out := struct {
		Models []modelEntry `json:"models"`
	}{Models: []modelEntry{}}
	for _, m := range f.core.Models() {
		if _, ok := f.served(m.Name); ok {
			out.Models = append(out.Models, modelEntry{ModelName: m.Name, ModelURL: m.Name + ".mar"})
		}
	}
	writeJSON(w, out)
}

type workerReply struct {
	ID          string `json:"id"`
	StartTime   string `json:"startTime"`
	Status      string `json:"status"`
	MemoryUsage int    `json:"memoryUsage"`
	PID         int    `json:"pid"`
	GPU         bool   `json:"gpu"`
	GPUUsage    string `json:"gpuUsage"`
}

type describeReply struct {
	ModelName       string        `json:"modelName"`
	ModelVersion    string        `json:"modelVersion"`
	ModelURL        string        `json:"modelUrl"`
	Runtime         string        `json:"runtime"`
	MinWorkers      int           `json:"minWorkers"`
	MaxWorkers      int           `json:"maxWorkers"`
	BatchSize       int           `json:"batchSize"`
	MaxBatchDelay   int           `json:"maxBatchDelay"`
	LoadedAtStartup bool          `json:"loadedAtStartup"`
	Workers         []workerReply `json:"workers"`
	JobQueueStatus  struct {
		RemainingCapacity int `json:"remainingCapacity"`
		PendingRequests   int `json:"pendingRequests"`
	} `json:"jobQueueStatus"`
}

func (f *frontend) describe(info refserver.ModelInfo) describeReply {
	n := max(info.Instances, 1)
	d := describeReply{ModelName: info.Name, ModelVersion: info.Version, ModelURL: info.Name + ".mar", Runtime: "perfscen-builtin",
		MinWorkers: n, MaxWorkers: n, BatchSize: 1, MaxBatchDelay: 100, LoadedAtStartup: true, Workers: make([]workerReply, n)}
	d.JobQueueStatus.RemainingCapacity = 1000
	for i := range d.Workers {
		d.Workers[i] = workerReply{ID: strconv.Itoa(9000 + i), StartTime: f.started.UTC().Format(time.RFC3339Nano), Status: "READY",
			PID: os.Getpid(), GPUUsage: "N/A"}
	}
	return d
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		writeError(w, http.StatusInternalServerError, "InternalServerException", err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(b, '\n'))
}
