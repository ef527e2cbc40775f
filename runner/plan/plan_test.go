package plan

import "testing"

func TestParseProtocol(t *testing.T) {
	tests := []struct {
		in      string
		want    Protocol
		wantErr string
	}{
		{"http", ProtocolHTTP, ""},
		{"grpc", ProtocolGRPC, ""},
		{"", "", `protocol "" is neither http nor grpc`},
		{"GRPC", "", `protocol "GRPC" is neither http nor grpc`},
		{"https", "", `protocol "https" is neither http nor grpc`},
	}
	for _, tt := range tests {
		got, err := ParseProtocol(tt.in)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("ParseProtocol(%q) = %q, %v; want error %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseProtocol(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func twoServerPlan() *Plan {
	return &Plan{
		Servers: []Server{{Name: "a", URL: "a:8000", Protocol: ProtocolHTTP}, {Name: "b", Kind: KindOpenAI, URL: "b:9000"}},
		Models:  []Model{{Alias: "a/m", Server: "a", Name: "m"}, {Alias: "b/m", Server: "b", Name: "m"}},
		Points:  []Point{{ID: "a/m/c=1", Model: "a/m", Server: "a"}, {ID: "b/m/c=1", Model: "b/m", Server: "b"}},
	}
}

func TestServers(t *testing.T) {
	one := &Plan{Servers: []Server{{URL: "h:1"}}}
	if s, ok := one.ServerOf(""); !ok || s.URL != "h:1" {
		t.Errorf("ServerOf(\"\") of a one-server plan = %+v, %v", s, ok)
	}
	if one.Server().URL != "h:1" || one.Named() {
		t.Errorf("Server() = %+v, Named() = %v", one.Server(), one.Named())
	}
	if one.ForServer(one.Server()) != one {
		t.Error("ForServer of a one-server plan is not the plan")
	}
	p := twoServerPlan()
	if s, ok := p.ServerOf("b"); !ok || s.URL != "b:9000" {
		t.Errorf("ServerOf(b) = %+v, %v", s, ok)
	}
	if _, ok := p.ServerOf("c"); ok {
		t.Error("found a server the plan does not hold")
	}
	if _, ok := p.ServerOf(""); ok {
		t.Error("a plan with servers: has no unnamed server")
	}
	if p.Server().URL != "" || !p.Named() {
		t.Errorf("a plan of several servers: Server() = %+v, Named() = %v", p.Server(), p.Named())
	}
	if !p.OpenAI() || one.OpenAI() {
		t.Error("OpenAI() wrong")
	}
	sub := p.ForServer(p.Servers[1])
	if sub.Server().Name != "b" || len(sub.Servers) != 1 || len(sub.Models) != 1 || sub.Models[0].Alias != "b/m" ||
		len(sub.Points) != 1 || sub.Points[0].ID != "b/m/c=1" {
		t.Errorf("ForServer(b) = %+v", sub)
	}
	if len(p.Models) != 2 || len(p.Points) != 2 {
		t.Error("ForServer changed the plan")
	}
	if m, ok := p.Model("a/m"); !ok || m.Name != "m" {
		t.Errorf("Model(a/m) = %+v, %v", m, ok)
	}
}

func TestURLFor(t *testing.T) {
	s := Server{URL: "h:8000", GRPCURL: "h:8001"}
	if got := s.URLFor(ProtocolHTTP); got != "h:8000" {
		t.Errorf("http: %s", got)
	}
	if got := s.URLFor(ProtocolGRPC); got != "h:8001" {
		t.Errorf("grpc: %s", got)
	}
	s.HTTPURL = "h:9000"
	if got := s.URLFor(ProtocolHTTP); got != "h:9000" {
		t.Errorf("http with http_url: %s", got)
	}
}

func TestPromptsAt(t *testing.T) {
	m := Model{Prompts: &Prompts{InputMean: 100, InputStdDev: 10, OutputMean: 50, Count: 8, Seed: 3}}
	got := m.PromptsAt(&Point{InputTokens: 512})
	if got.InputMean != 512 || got.OutputMean != 50 || got.InputStdDev != 10 || got.Count != 8 {
		t.Errorf("PromptsAt = %+v", got)
	}
	if m.Prompts.InputMean != 100 {
		t.Error("PromptsAt changed the model")
	}
	if (Model{}).PromptsAt(&Point{}) != nil {
		t.Error("a model without prompts has prompts at a point")
	}
}

// Thresholds, abort conditions and searches judge by one operator rule.
func TestCompare(t *testing.T) {
	tests := []struct {
		v, bound float64
		op       string
		want     bool
	}{
		{1, 2, "<", true}, {2, 2, "<", false}, {2, 2, "<=", true}, {3, 2, "<=", false},
		{3, 2, ">", true}, {2, 2, ">", false}, {2, 2, ">=", true}, {1, 2, ">=", false},
		{0.1 + 0.2, 0.3, "==", true}, {0.31, 0.3, "==", false},
	}
	for _, tc := range tests {
		got, err := Compare(tc.v, tc.op, tc.bound)
		if err != nil || got != tc.want || Holds(tc.v, tc.op, tc.bound) != tc.want {
			t.Errorf("%v %s %v: %v, %v; want %v", tc.v, tc.op, tc.bound, got, err, tc.want)
		}
	}
	if _, err := Compare(1, "=<", 2); err == nil || Holds(1, "=<", 2) {
		t.Error("an unknown operator compared")
	}
}
