package numfmt

import (
	"math"
	"regexp"
	"testing"
)

func TestValue(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		unit string
		want string
	}{
		{21760, "us", "21.76ms"},
		{22260.4, "us", "22.26ms"},
		{850, "us", "850µs"},
		{999.4, "us", "999µs"},
		{3000, "us", "3.00ms"},
		{1.5e6, "us", "1.500s"},
		{2.5e10, "us", "25000.000s"},
		{801.26, "infer/s", "801.3 infer/s"},
		{1.234e7, "tokens/s", "12340000.0 tokens/s"},
		{12.5, "req/s", "12.5 req/s"},
		{3, "count", "3"},
		{31.25, "count", "31.2"},
		{0.0002, "fraction", "0.02%"},
		{1.15, "ratio", "1.150"},
		{-0.0001, "ratio", "0.000"},
		{12345.678, "widgets", "12346 widgets"},
		{0.000123456, "widgets", "0.0001235 widgets"},
		{math.NaN(), "us", "n/a"},
	} {
		if got := Value(tc.v, tc.unit); got != tc.want {
			t.Errorf("Value(%v, %q) = %q, want %q", tc.v, tc.unit, got, tc.want)
		}
	}
}

func TestP(t *testing.T) {
	for _, tc := range []struct {
		p    float64
		want string
	}{
		{1, "1"}, {0.5, "0.5"}, {0.0012, "0.0012"}, {0.000213, "0.00021"}, {0.012345, "0.012"},
		{0.005, "0.005"}, {2.1e-5, "<0.0001"}, {1e-300, "<0.0001"}, {0, "0"}, {0.99999, "1"},
	} {
		if got := P(tc.p); got != tc.want {
			t.Errorf("P(%v) = %q, want %q", tc.p, got, tc.want)
		}
	}
	if got := PEq("p", 2e-9); got != "p < 0.0001" {
		t.Errorf("PEq = %q", got)
	}
	if got := PEq("α", 0.0045); got != "α = 0.0045" {
		t.Errorf("PEq = %q", got)
	}
}

func TestMDE(t *testing.T) {
	for _, tc := range []struct {
		mde  float64
		want string
	}{
		{0.03, "3.0%"}, {1, "100.0%"}, {28533781.471, "over 100%"}, {0, "n/a"}, {math.NaN(), "n/a"}, {-1, "n/a"},
	} {
		if got := MDE(tc.mde); got != tc.want {
			t.Errorf("MDE(%v) = %q, want %q", tc.mde, got, tc.want)
		}
	}
	if got := HistoryMDE(28533781.471); got != "over 100% (uncalibrated)" {
		t.Errorf("HistoryMDE = %q", got)
	}
	if got := HistoryMDE(0.072); got != "7.2%" {
		t.Errorf("HistoryMDE = %q", got)
	}
}

func TestPercents(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{Pct(0.123), "12.3%"}, {SignedPct(0.123), "+12.3%"}, {SignedPct(-0.04), "-4.0%"}, {SignedPct(-0.00001), "+0.0%"},
		{Percent(0.001), "0.1%"}, {Percent(1e-7), "0.00001%"}, {Percent(0), "0%"}, {Ratio(2.3104), "2.310"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

var exponent = regexp.MustCompile(`\d[eE][+-]?\d`)

// No figure is ever printed in exponent form, whatever its size.
func TestNoExponent(t *testing.T) {
	for _, v := range []float64{1e-12, 3.3e-7, 1e21, 2853378147.1, -4e-9} {
		for _, unit := range []string{"us", "infer/s", "tokens/s", "count", "fraction", "ratio", "widgets"} {
			if s := Value(v, unit); exponent.MatchString(s) {
				t.Errorf("Value(%v, %q) = %q", v, unit, s)
			}
		}
		for _, s := range []string{P(v), MDE(v), Pct(v), Significant(v, 3)} {
			if exponent.MatchString(s) {
				t.Errorf("%v rendered as %q", v, s)
			}
		}
	}
}

func TestBytes(t *testing.T) {
	for _, tc := range []struct {
		b    float64
		want string
	}{{0, "0 B"}, {512, "512 B"}, {64 << 10, "64 KiB"}, {1.5 * (1 << 30), "1.5 GiB"}, {1e6 * (64 << 10), "61 GiB"}, {1 << 50, "1024 TiB"}} {
		if got := Bytes(tc.b); got != tc.want {
			t.Errorf("Bytes(%g) = %q, want %q", tc.b, got, tc.want)
		}
	}
}
