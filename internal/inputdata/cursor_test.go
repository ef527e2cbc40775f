package inputdata

import (
	"fmt"
	"strings"
	"testing"
)

func TestCursor(t *testing.T) {
	flat := &Data{Streams: [][]Step{{{Origin: "a"}, {Origin: "b"}, {Origin: "c"}}}}
	seq := &Data{Sequences: true, Streams: [][]Step{
		{{Origin: "s0.0"}, {Origin: "s0.1"}},
		{{Origin: "s1.0"}},
		{{Origin: "s2.0"}, {Origin: "s2.1"}, {Origin: "s2.2"}},
	}}
	tests := []struct {
		name            string
		d               *Data
		worker, workers int
		n               int
		want            string
	}{
		{"flat single worker cycles", flat, 0, 1, 5, "a b c a b"},
		{"flat worker 0 of 2", flat, 0, 2, 4, "a c b a"},
		{"flat worker 1 of 2", flat, 1, 2, 4, "b a c b"},
		{"sequences one worker", seq, 0, 1, 7, "s0.0[ s0.1] s1.0[] s2.0[ s2.1 s2.2] s0.0["},
		{"sequences worker 1 of 2", seq, 1, 2, 5, "s1.0[] s0.0[ s0.1] s2.0[ s2.1"},
		{"sequences more workers than streams", seq, 4, 5, 3, "s1.0[] s0.0[ s0.1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.d.Cursor(tt.worker, tt.workers)
			var got []string
			for range tt.n {
				r := c.Next()
				s := r.Origin
				if r.Start {
					s += "["
				}
				if r.End {
					s += "]"
				}
				if tt.d.Sequences && fmt.Sprintf("s%d.%d", r.Stream, r.Index) != r.Origin {
					t.Errorf("request %s reports stream %d index %d", r.Origin, r.Stream, r.Index)
				}
				got = append(got, s)
			}
			if g := strings.Join(got, " "); g != tt.want {
				t.Errorf("got  %s\nwant %s", g, tt.want)
			}
		})
	}
}
