package torchserve

import (
	"bytes"
	"io"
	"mime"
	"mime/multipart"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadFile(t *testing.T) {
	reqs, err := loadFile("testdata/inputs/all.json")
	if err != nil {
		t.Fatal(err)
	}
	kitten, _ := os.ReadFile("testdata/inputs/kitten.bin")
	want := []struct {
		body, ct string
		expect   string
		json     bool
	}{
		{`{"data":[1,2,3,4]}`, ctJSON, `{"output":[-2.218118,1.763946]}`, true},
		{`[0,0,0,0]`, "application/octet-stream", "", false},
		{"", "", "ok", false}, // multipart: checked below
		{`{"data":[1,2,3,4]}`, ctJSON, "\x00\x01\x02", false},
		{string(kitten), ctBinary, string(kitten), false},
		{"\x00\x01\x02", ctBinary, "", false},
		{"tiny", ctText, "", false},
		{"", "", `{"output":[1,2]}`, true},
	}
	if len(reqs) != len(want) {
		t.Fatalf("%d requests, want %d", len(reqs), len(want))
	}
	for i, w := range want {
		r := reqs[i]
		if r.origin != "all.json step "+string(rune('0'+i)) {
			t.Errorf("step %d origin %q", i, r.origin)
		}
		if w.ct != "" && (string(r.body) != w.body || r.contentType != w.ct) {
			t.Errorf("step %d: body %q type %q, want %q %q", i, r.body, r.contentType, w.body, w.ct)
		}
		switch {
		case w.expect == "" && r.expect != nil:
			t.Errorf("step %d: expects %q, want nothing", i, r.expect.raw)
		case w.expect != "" && (r.expect == nil || string(r.expect.raw) != w.expect || r.expect.json != w.json):
			t.Errorf("step %d: expectation %+v, want %q json=%v", i, r.expect, w.expect, w.json)
		}
	}
	// perf_analyzer's TORCHSERVE_INPUT: the file as form part "data",
	// without a filename or a Content-Type of its own.
	name, ct, body := onePart(t, reqs[2])
	if name != "data" || ct != "" || body != string(kitten) {
		t.Errorf("TORCHSERVE_INPUT part %q type %q body %q", name, ct, body)
	}
	name, ct, body = onePart(t, reqs[7])
	if name != "body" || ct != "application/json" || body != `{"data":[1,2,3,4]}` {
		t.Errorf("json part %q type %q body %q", name, ct, body)
	}
	again, _ := loadFile("testdata/inputs/all.json")
	if !bytes.Equal(again[2].body, reqs[2].body) || again[2].contentType != reqs[2].contentType {
		t.Error("the multipart body differs between loads: its boundary must be stable")
	}
}

// onePart decodes a multipart request holding exactly one part.
func onePart(t *testing.T, r request) (name, ct, body string) {
	t.Helper()
	mt, params, err := mime.ParseMediaType(r.contentType)
	if err != nil || mt != "multipart/form-data" {
		t.Fatalf("content type %q: %v", r.contentType, err)
	}
	mr := multipart.NewReader(bytes.NewReader(r.body), params["boundary"])
	p, err := mr.NextPart()
	if err != nil {
		t.Fatal(err)
	}
	if p.FileName() != "" {
		t.Errorf("part has a filename %q", p.FileName())
	}
	b, _ := io.ReadAll(p)
	if _, err := mr.NextPart(); err != io.EOF {
		t.Errorf("more than one part: %v", err)
	}
	return p.FormName(), p.Header.Get("Content-Type"), string(b)
}

func TestLoadDir(t *testing.T) {
	reqs, err := loadDir("testdata/inputs/dir")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range reqs {
		got = append(got, r.origin+" "+r.contentType)
	}
	want := "01-first.json application/json|02-second.txt text/plain; charset=utf-8|03-third.bin application/octet-stream"
	if strings.Join(got, "|") != want {
		t.Errorf("got %s", strings.Join(got, "|"))
	}
	if _, err := loadDir(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no files") {
		t.Errorf("empty directory: %v", err)
	}
}

// Every mistake names the file, the line and the entry.
func TestLoadFileErrors(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"syntax", "{\n\"data\": [\n{\"json\": }\n]}", "in.json:3: invalid character '}'"},
		{"unknown top key", "{\"data\": [{\"text\": \"a\"}],\n\"validation\": []}", `in.json:2: unknown key "validation"`},
		{"no data", `{"validation_data": []}`, `"data" must be a non-empty list`},
		{"two bodies", "{\"data\": [\n{\"text\": \"a\"},\n{\"text\": \"a\", \"json\": 1}]}", `in.json:3: data[1]: give one body, not both "json" and "text"`},
		{"no body", "{\"data\": [{\"content_type\": \"x\"}]}", "data[0]: no body"},
		{"unknown key", "{\"data\": [{\"jsno\": 1}]}", `data[0]: unknown key "jsno"`},
		{"streams", "{\"data\": [[{\"text\": \"a\"}]]}", "streams form"},
		{"missing file", "{\"data\": [\n\n{\"file\": \"nope.bin\"}]}", "in.json:3: data[0]: file "},
		{"bad b64", "{\"data\": [{\"b64\": \"***\"}]}", "data[0]: b64: illegal base64"},
		{"two paths", "{\"data\": [{\"TORCHSERVE_INPUT\": [\"a\", \"b\"]}]}", "must hold exactly one file path"},
		{"path not a string", "{\"data\": [{\"TORCHSERVE_INPUT\": [1]}]}", "a list holding one file path"},
		{"validation length", "{\"data\": [{\"text\": \"a\"}],\n\"validation_data\": [{}, {}]}", `in.json:2: "validation_data" has 2 entries, "data" 1`},
		{"validation two", "{\"data\": [{\"text\": \"a\"}], \"validation_data\": [{\"text\": \"a\", \"b64\": \"\"}]}", "validation_data[0]: give one expected reply"},
		{"validation key", "{\"data\": [{\"text\": \"a\"}], \"validation_data\": [{\"output\": 1}]}", `validation_data[0]: unknown key "output"`},
		{"empty content type", "{\"data\": [{\"text\": \"a\", \"content_type\": \" \"}]}", "content_type must be a non-empty string"},
		{"trailing", "{\"data\": [{\"text\": \"a\"}]} {}", "trailing content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "in.json")
			if err := os.WriteFile(p, []byte(tt.doc), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := loadFile(p)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}

func FuzzLoadFile(f *testing.F) {
	b, _ := os.ReadFile("testdata/inputs/all.json")
	f.Add(b)
	f.Add([]byte(`{"data": [{"TORCHSERVE_INPUT": "req.json"}], "validation_data": [{}]}`))
	dir := f.TempDir()
	_ = os.WriteFile(filepath.Join(dir, "req.json"), []byte(`{}`), 0o600)
	f.Fuzz(func(t *testing.T, in []byte) {
		p := filepath.Join(dir, "in.json")
		if err := os.WriteFile(p, in, 0o600); err != nil {
			t.Fatal(err)
		}
		reqs, err := loadFile(p)
		if err != nil {
			return
		}
		for _, r := range reqs {
			if r.contentType == "" {
				t.Errorf("%s has no Content-Type", r.origin)
			}
		}
	})
}
