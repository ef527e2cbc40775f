package tritoncapi

import "testing"

// The document TRITONSERVER_ServerModelStatistics returns (Triton 2.46),
// two versions of one model: both are summed.
func TestCountersFromJSON(t *testing.T) {
	doc := `{"model_stats":[
 {"name":"m","version":"1","last_inference":1,"inference_count":8,"execution_count":2,
  "inference_stats":{"success":{"count":3,"ns":300},"fail":{"count":1,"ns":10},"queue":{"count":3,"ns":30},
   "compute_input":{"count":3,"ns":3},"compute_infer":{"count":3,"ns":200},"compute_output":{"count":3,"ns":6},
   "cache_hit":{"count":0,"ns":0},"cache_miss":{"count":0,"ns":0}},"response_stats":{},"batch_stats":[],"memory_usage":[]},
 {"name":"m","version":"2","inference_count":1,"execution_count":1,
  "inference_stats":{"success":{"count":1,"ns":100},"queue":{"count":1,"ns":10},"compute_infer":{"count":1,"ns":50}}},
 {"name":"other","version":"1","inference_count":99}]}`
	c, err := countersFromJSON([]byte(doc), "m", "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Inferences != 9 || c.Executions != 3 || c.Success.Count != 4 || c.Success.Ns != 400 || c.Queue.Ns != 40 ||
		c.ComputeInfer.Ns != 250 || c.ComputeInput.Ns != 3 || c.ComputeOutput.Ns != 6 || c.Fail.Count != 1 {
		t.Errorf("counters %+v", c)
	}
	if c, err := countersFromJSON([]byte(doc), "m", "2"); err != nil || c.Success.Count != 1 {
		t.Errorf("version 2: %+v %v", c, err)
	}
	if _, err := countersFromJSON([]byte(doc), "nosuch", ""); err == nil {
		t.Error("a model the document lacks went unnoticed")
	}
	if _, err := countersFromJSON([]byte(`{`), "m", ""); err == nil {
		t.Error("bad JSON went unnoticed")
	}
}

func FuzzCountersFromJSON(f *testing.F) {
	f.Add([]byte(`{"model_stats":[{"name":"m","version":"1","inference_count":1}]}`), "m")
	f.Fuzz(func(t *testing.T, b []byte, name string) {
		_, _ = countersFromJSON(b, name, "")
	})
}

// The version Triton served a model with, when the scenario named none,
// is read from its statistics: the versions with successful requests
// (the result recorded no version before).
func TestVersionsServed(t *testing.T) {
	b := []byte(`{"model_stats": [
	  {"name": "m", "version": "1", "inference_stats": {"success": {"count": 0, "ns": 0}}},
	  {"name": "m", "version": "3", "inference_stats": {"success": {"count": 12, "ns": 900}}},
	  {"name": "other", "version": "2", "inference_stats": {"success": {"count": 5, "ns": 100}}}]}`)
	if got := versionsServed(b, "m"); len(got) != 1 || got[0] != "3" {
		t.Errorf("versions served %q, want [3]", got)
	}
	if got := versionsServed([]byte("not json"), "m"); got != nil {
		t.Errorf("from garbage: %q", got)
	}
}
