package importer

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// Options fill in what a perf_analyzer output does not say itself.
type Options struct {
	// Model names the model when the input does not (a CSV never does; a
	// log does when it echoes the perf_analyzer command line).
	Model string
	// BatchSize is used when the input does not state it; 0 means 1,
	// perf_analyzer's default.
	BatchSize int
	// Protocol is used when the input does not reveal it; "" means http,
	// perf_analyzer's default.
	Protocol plan.Protocol
	// Concurrency or RequestRate is the load level of an input that does
	// not state it (a genai-perf CSV).
	Concurrency int
	RequestRate float64
	// ServiceKind is perf_analyzer's --service-kind of an input that does
	// not say it (a CSV never does; a log does on its command line or its
	// "Service Kind:" line): tfserving, torchserve or dynamic_grpc imply
	// the protocol and mark the points as measured on the client only.
	ServiceKind string
}

// Input formats.
const (
	FormatCSV       = "csv"
	FormatLog       = "log"
	FormatGenAIPerf = "genai-perf-csv"
	// AIPerf's aggregate export (profile_export_aiperf.json) and its
	// per-request records (profile_export.jsonl).
	FormatAIPerfJSON    = "aiperf-json"
	FormatAIPerfRecords = "aiperf-jsonl"
)

// ErrEmpty is returned for an input with nothing but white space.
var ErrEmpty = errors.New("empty input")

// Detect says whether b is a perf_analyzer CSV (its header starts with the
// load column), a genai-perf CSV (its first table starts "Metric,"), one of
// AIPerf's JSON exports, or a perf_analyzer console log.
func Detect(b []byte) (string, error) {
	if f, ok := isAIPerf(b); ok {
		return f, nil
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		s := strings.TrimSpace(string(line))
		if s == "" {
			continue
		}
		if strings.HasPrefix(s, colConcurrency+",") || strings.HasPrefix(s, colRequestRate+",") {
			return FormatCSV, nil
		}
		if isGenAIPerf(s) {
			return FormatGenAIPerf, nil
		}
		return FormatLog, nil
	}
	return "", ErrEmpty
}

// Parse turns one perf_analyzer output into points; name is used in error
// messages and notes.
func Parse(name string, b []byte, opts Options) (format string, points []result.Point, err error) {
	if opts.ServiceKind != "" {
		if opts.ServiceKind, err = ParseServiceKind(opts.ServiceKind); err != nil {
			return "", nil, err
		}
	}
	format, err = Detect(b)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", name, err)
	}
	switch format {
	case FormatCSV:
		points, err = ParseCSV(name, bytes.NewReader(b), opts)
	case FormatGenAIPerf:
		points, err = ParseGenAIPerf(name, bytes.NewReader(b), opts)
	case FormatAIPerfJSON:
		points, err = ParseAIPerfJSON(name, b, opts)
	case FormatAIPerfRecords:
		points, err = ParseAIPerfRecords(name, b, opts)
	default:
		points, err = ParseLog(name, bytes.NewReader(b), opts)
	}
	return format, points, err
}

// ImportFiles reads perf_analyzer outputs and assembles one run. All inputs
// must be of the same kind (CSV or log) so the run's source is unambiguous.
func ImportFiles(paths []string, opts Options) (*result.Run, error) {
	if len(paths) == 0 {
		return nil, errors.New("no input files")
	}
	var (
		source string
		all    []result.Point
	)
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("reading perf_analyzer output: %w", err)
		}
		format, points, err := Parse(p, b, opts)
		if err != nil {
			return nil, err
		}
		s := sourceOf(format)
		if source != "" && s != source {
			return nil, fmt.Errorf("%s: is a %s but %s is a %s; import each kind separately", p, kindOf(format), paths[0], kindOf(formatOf(source)))
		}
		source = s
		all = append(all, points...)
	}
	name := strings.TrimSuffix(filepath.Base(paths[0]), filepath.Ext(paths[0]))
	return Assemble(name, source, all), nil
}

// Assemble wraps imported points in a run, giving every point a unique ID.
func Assemble(scenario, source string, points []result.Point) *result.Run {
	uniqueIDs(points)
	return &result.Run{
		SchemaVersion: result.SchemaVersion,
		Scenario:      scenario,
		Source:        source,
		Status:        result.StatusComplete,
		Points:        points,
	}
}

func sourceOf(format string) string {
	switch format {
	case FormatCSV:
		return "perf_analyzer-csv"
	case FormatGenAIPerf, FormatAIPerfJSON, FormatAIPerfRecords:
		return format
	}
	return "perf_analyzer-log"
}

// kindOf names an input format for people.
func kindOf(format string) string {
	switch format {
	case FormatCSV:
		return "perf_analyzer CSV"
	case FormatGenAIPerf:
		return "genai-perf CSV"
	case FormatAIPerfJSON:
		return "AIPerf aggregate export"
	case FormatAIPerfRecords:
		return "AIPerf per-request export"
	}
	return "perf_analyzer log"
}

func formatOf(source string) string {
	switch source {
	case "perf_analyzer-csv":
		return FormatCSV
	case FormatGenAIPerf, FormatAIPerfJSON, FormatAIPerfRecords:
		return source
	}
	return FormatLog
}

// uniqueIDs suffixes repeated IDs (the same model and load measured twice,
// e.g. two runs in one log) so baselines and checks can tell them apart.
func uniqueIDs(points []result.Point) {
	seen := map[string]int{}
	for i := range points {
		id := points[i].ID
		seen[id]++
		if n := seen[id]; n > 1 {
			points[i].ID = fmt.Sprintf("%s#%d", id, n)
			points[i].Notes = append(points[i].Notes, fmt.Sprintf("same model and load as an earlier point; renamed from %s", id))
		}
	}
}

// level is one perf_analyzer load level.
type level struct {
	rate        bool
	concurrency int
	requestRate float64
}

// newPoint builds an imported point with perfscen's ID scheme
// (model/c=N or model/r=R) and the sweep coordinates checks select on.
func newPoint(model string, lv level, batch int, protocol plan.Protocol, shm string) result.Point {
	if batch <= 0 {
		batch = 1
	}
	if protocol == "" {
		protocol = plan.ProtocolHTTP
	}
	if shm == "" {
		shm = string(plan.ShmNone)
	}
	p := result.Point{
		Model:        model,
		ModelName:    model,
		Protocol:     protocol,
		SharedMemory: plan.SharedMemory(shm),
		BatchSize:    batch,
		Status:       result.PointImported,
		Coords: map[string]string{
			"batch_size":    strconv.Itoa(batch),
			"protocol":      string(protocol),
			"shared_memory": shm,
		},
	}
	if lv.rate {
		r := formatFloat(lv.requestRate)
		p.Mode = plan.LoadRequestRate
		p.RequestRate = lv.requestRate
		p.ID = model + "/r=" + r
		p.Coords["request_rate"] = r
	} else {
		p.Mode = plan.LoadConcurrency
		p.Concurrency = lv.concurrency
		p.ID = fmt.Sprintf("%s/c=%d", model, lv.concurrency)
		p.Coords["concurrency"] = strconv.Itoa(lv.concurrency)
	}
	return p
}

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
