package failure

import (
	"errors"
	"fmt"
	"testing"
)

func TestKindOf(t *testing.T) {
	base := errors.New("boom")
	tests := []struct {
		name string
		err  error
		want Kind
	}{
		{"nil", nil, Unclassified},
		{"unmarked", base, Unclassified},
		{"invalid", Invalid(base), InvalidInput},
		{"environment", Env(base), Environment},
		{"wrapped keeps its kind", fmt.Errorf("point p: %w", Env(base)), Environment},
		{"outermost wins", Invalid(fmt.Errorf("x: %w", Env(base))), InvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := KindOf(tt.err); got != tt.want {
				t.Errorf("KindOf = %v, want %v", got, tt.want)
			}
			if tt.err != nil && !errors.Is(tt.err, base) {
				t.Errorf("marking lost the wrapped error")
			}
		})
	}
	if Invalid(nil) != nil || Env(nil) != nil {
		t.Error("marking nil must stay nil")
	}
}
