package scenario

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr string
	}{
		{"5s", 5 * time.Second, ""},
		{"500ms", 500 * time.Millisecond, ""},
		{"1m30s", 90 * time.Second, ""},
		{"1.5s", 1500 * time.Millisecond, ""},
		{"250us", 250 * time.Microsecond, ""},
		{"250µs", 250 * time.Microsecond, ""},
		{" 2s ", 2 * time.Second, ""},
		{"0s", 0, ""},
		{"5 sec", 0, `"5 sec" is not a duration (examples: 500ms, 5s)`},
		{"5", 0, `"5" is not a duration`},
		{"-5s", 0, "not a duration"},
		{"", 0, "not a duration"},
		{"99999999999h", 0, "not a duration"},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseDuration(%q) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParsePercent(t *testing.T) {
	tests := []struct {
		in      string
		signed  bool
		want    float64
		wantErr bool
	}{
		{"10%", false, 10, false},
		{"2.5%", false, 2.5, false},
		{"0%", false, 0, false},
		{"-5%", true, -5, false},
		{"+10%", true, 10, false},
		{"-5%", false, 0, true},
		{"10", false, 0, true},
		{"10 %", false, 0, true},
		{"0.1", true, 0, true},
		{"%", true, 0, true},
	}
	for _, tt := range tests {
		got, err := ParsePercent(tt.in, tt.signed)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParsePercent(%q, %v) = %v, %v; want %v, err %v", tt.in, tt.signed, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{"102400", 102400, false},
		{"64KiB", 65536, false},
		{"64 KiB", 65536, false},
		{"1MiB", 1 << 20, false},
		{"1.5MB", 1500000, false},
		{"2GiB", 2 << 30, false},
		{"10B", 10, false},
		{"0", 0, true},
		{"1.5B", 0, true},
		{"64kb", 0, true},
		{"64 kilobytes", 0, true},
		{"-1", 0, true},
		{"99999999999GiB", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseSize(%q) = %v, %v; want %v, err %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestParseRange(t *testing.T) {
	tests := []struct {
		in      string
		want    []float64
		wantErr string
	}{
		{"1:4", []float64{1, 2, 3, 4}, ""},
		{"1:4:1", []float64{1, 2, 3, 4}, ""},
		{"8:128:8", []float64{8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, 128}, ""},
		{"1:10:4", []float64{1, 5, 9}, ""},
		{"5:5", []float64{5}, ""},
		{"0.1:0.3:0.1", []float64{0.1, 0.2, 0.3}, ""},
		{"100:250:50", []float64{100, 150, 200, 250}, ""},
		{" 1 : 2 ", []float64{1, 2}, ""},
		{"128:8:8", nil, "is empty"},
		{"1:4:0", nil, "step must be > 0"},
		{"0:4", nil, "start must be > 0"},
		{"1", nil, "not a range"},
		{"1:2:3:4", nil, "not a range"},
		{"a:b", nil, "not a number"},
		{"1:100000", nil, "at most"},
	}
	for _, tt := range tests {
		got, err := ParseRange(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseRange(%q) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseRange(%q): %v", tt.in, err)
			continue
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("ParseRange(%q) (-want +got)\n%s", tt.in, d)
		}
	}
}

func TestParseInts(t *testing.T) {
	tests := []struct {
		in      StringList
		want    []int
		wantErr bool
	}{
		{StringList{"1", "2", "8"}, []int{1, 2, 8}, false},
		{StringList{"2:6:2"}, []int{2, 4, 6}, false},
		{StringList{"1.5"}, nil, true},
		{StringList{"1", "1"}, nil, true},
		{StringList{"0"}, nil, true},
		{StringList{"1:2:0.5"}, nil, true},
		{StringList{}, nil, true},
	}
	for _, tt := range tests {
		got, err := parseInts(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("parseInts(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if !tt.wantErr {
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("parseInts(%q) (-want +got)\n%s", tt.in, d)
			}
		}
	}
}
