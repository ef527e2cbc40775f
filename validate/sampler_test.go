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
		s := NewSampler(tt.first, tt.every, 1)
		got := make([]byte, 10)
		for i := range got {
			got[i] = '.'
			if s.Sample(0) {
				got[i] = 'x'
			}
		}
		if string(got) != tt.want {
			t.Errorf("first %d every %d: %s, want %s", tt.first, tt.every, got, tt.want)
		}
	}
}

// Round-robin entries, as one worker sends them: after the first
// responses each entry is checked once in every of its own responses,
// whatever the number of entries (a count across all responses checked
// entry 0 alone for 2, 5 or 10 entries and every 10).
func TestSamplerRoundRobin(t *testing.T) {
	for _, n := range []int{2, 3, 5, 10, 20} {
		const first, every, rounds = 100, 10, 1000
		s := NewSampler(first, every, n)
		checked := make([]int, n)
		for i := range rounds * n {
			if s.Sample(i%n) && i >= first {
				checked[i%n]++
			}
		}
		for e, c := range checked {
			// Each entry's responses after the first 100, one in 10.
			after := rounds - (first+n-1-e)/n
			if want := (after + every - 1) / every; c != want {
				t.Errorf("%d entries: entry %d checked %d times after the first %d responses, want %d", n, e, c, first, want)
			}
		}
	}
}

func TestSamplerConcurrent(t *testing.T) {
	s := NewSampler(5, 10, 4)
	var mu sync.Mutex
	picked := 0
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				if s.Sample(w % 4) {
					mu.Lock()
					picked++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	// 5 up front; each entry's 2000 responses less its share k of those
	// give ceil((2000-k)/10) = 200 checks each, however the 5 fell.
	if want := 5 + 4*200; picked != want {
		t.Errorf("picked %d of 8000, want %d", picked, want)
	}
}
