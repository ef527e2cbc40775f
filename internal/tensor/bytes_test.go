package tensor

import (
	"bytes"
	"testing"
)

func TestBytesElementsEncoding(t *testing.T) {
	tests := []struct {
		elems [][]byte
		want  []byte
	}{
		{nil, nil},
		{[][]byte{{}}, []byte{0, 0, 0, 0}},
		{[][]byte{[]byte("ab"), []byte("c")}, []byte{2, 0, 0, 0, 'a', 'b', 1, 0, 0, 0, 'c'}},
		{[][]byte{bytes.Repeat([]byte{'x'}, 300)}, append([]byte{0x2c, 0x01, 0, 0}, bytes.Repeat([]byte{'x'}, 300)...)},
	}
	for _, tc := range tests {
		got := EncodeBytesElements(tc.elems)
		if !bytes.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
			t.Errorf("EncodeBytesElements(%q) = % x, want % x", tc.elems, got, tc.want)
		}
		back, err := BytesElements(got)
		if err != nil {
			t.Fatalf("BytesElements: %v", err)
		}
		if len(back) != len(tc.elems) {
			t.Fatalf("got %d elements, want %d", len(back), len(tc.elems))
		}
		for i := range back {
			if !bytes.Equal(back[i], tc.elems[i]) {
				t.Errorf("element %d = %q, want %q", i, back[i], tc.elems[i])
			}
		}
	}
}

func TestBytesElementsMalformed(t *testing.T) {
	for _, raw := range [][]byte{
		{1},
		{1, 0, 0},
		{1, 0, 0, 0},
		{2, 0, 0, 0, 'a'},
		{0, 0, 0, 0, 1},
		{0xff, 0xff, 0xff, 0xff, 'a'},
	} {
		if _, err := BytesElements(raw); err == nil {
			t.Errorf("BytesElements(% x) succeeded", raw)
		}
	}
}

func FuzzBytesElements(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{2, 0, 0, 0, 'h', 'i', 0, 0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f})
	f.Fuzz(func(t *testing.T, raw []byte) {
		elems, err := BytesElements(raw)
		n, cerr := CountBytesElements(raw)
		if (err == nil) != (cerr == nil) {
			t.Fatalf("BytesElements err %v but CountBytesElements err %v", err, cerr)
		}
		if err != nil {
			return
		}
		if n != len(elems) {
			t.Fatalf("count %d, elements %d", n, len(elems))
		}
		if re := EncodeBytesElements(elems); !bytes.Equal(re, raw) {
			t.Fatalf("re-encoding gave % x, want % x", re, raw)
		}
	})
}
