package scenario

import "testing"

func TestTensorFormat(t *testing.T) {
	for _, tc := range []struct {
		format string
		want   string
		ok     bool
	}{
		{"", "auto", true}, {"auto", "auto", true}, {"binary", "binary", true}, {"json", "json", true}, {"xml", "", false},
	} {
		y := "version: 1\nserver: {embedded: true}\nmodels: [{name: simple}]\n"
		if tc.format != "" {
			y = "version: 1\nserver: {embedded: true, tensor_format: " + tc.format + "}\nmodels: [{name: simple}]\n"
		}
		s, err := Parse("t.yaml", []byte(y), func(string) string { return "" })
		if (err == nil) != tc.ok {
			t.Fatalf("tensor_format %q: err = %v", tc.format, err)
		}
		if err != nil {
			continue
		}
		p, err := Expand(s)
		if err != nil {
			t.Fatal(err)
		}
		if string(p.Server().TensorFormat) != tc.want {
			t.Errorf("tensor_format %q: TensorFormat = %q, want %q", tc.format, p.Server().TensorFormat, tc.want)
		}
	}
}
