package validate

import (
	"sync"
	"testing"
)

func TestSampler(t *testing.T) {
	tests := []struct {
		first, every int
		want         string
	}{
		{0, 1, "xxxxxxxxxx"},
		{0, 0, "xxxxxxxxxx"},
		{0, 3, "x..x..x..x"},
		{2, 4, "xxx...x..."},
		{20, 100, "xxxxxxxxxx"},
	}
	for _, tt := range tests {
		s := NewSampler(tt.first, tt.every)
		got := make([]byte, 10)
		for i := range got {
			got[i] = '.'
			if s.Sample() {
				got[i] = 'x'
			}
		}
		if string(got) != tt.want {
			t.Errorf("first %d every %d: %s, want %s", tt.first, tt.every, got, tt.want)
		}
	}
}

func TestSamplerConcurrent(t *testing.T) {
	s := NewSampler(5, 10)
	var mu sync.Mutex
	picked := 0
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				if s.Sample() {
					mu.Lock()
					picked++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	// 5 up front, then indexes 5, 15, ..., 7995 of the remaining 7995.
	if want := 5 + 800; picked != want {
		t.Errorf("picked %d of 8000, want %d", picked, want)
	}
}
