package tensor

import "testing"

func TestDataTypeTable(t *testing.T) {
	tests := []struct {
		dt     DataType
		size   int
		config string
	}{
		{BOOL, 1, "TYPE_BOOL"},
		{UINT8, 1, "TYPE_UINT8"},
		{UINT16, 2, "TYPE_UINT16"},
		{UINT32, 4, "TYPE_UINT32"},
		{UINT64, 8, "TYPE_UINT64"},
		{INT8, 1, "TYPE_INT8"},
		{INT16, 2, "TYPE_INT16"},
		{INT32, 4, "TYPE_INT32"},
		{INT64, 8, "TYPE_INT64"},
		{FP16, 2, "TYPE_FP16"},
		{BF16, 2, "TYPE_BF16"},
		{FP32, 4, "TYPE_FP32"},
		{FP64, 8, "TYPE_FP64"},
		{BYTES, 0, "TYPE_STRING"},
	}
	if len(tests) != len(DataTypes) {
		t.Fatalf("table covers %d types, DataTypes has %d", len(tests), len(DataTypes))
	}
	for _, tc := range tests {
		t.Run(string(tc.dt), func(t *testing.T) {
			got, err := ParseDataType(string(tc.dt))
			if err != nil || got != tc.dt {
				t.Fatalf("ParseDataType(%q) = %q, %v", tc.dt, got, err)
			}
			if tc.dt.Size() != tc.size {
				t.Errorf("Size = %d, want %d", tc.dt.Size(), tc.size)
			}
			if tc.dt.ConfigName() != tc.config {
				t.Errorf("ConfigName = %q, want %q", tc.dt.ConfigName(), tc.config)
			}
		})
	}
}

func TestParseDataTypeRejects(t *testing.T) {
	for _, s := range []string{"", "fp32", "FLOAT", "TYPE_FP32", "STRING"} {
		if _, err := ParseDataType(s); err == nil {
			t.Errorf("ParseDataType(%q) succeeded", s)
		}
	}
}

func TestElementCount(t *testing.T) {
	tests := []struct {
		shape   []int64
		want    int64
		wantErr bool
	}{
		{nil, 1, false},
		{[]int64{}, 1, false},
		{[]int64{2, 3}, 6, false},
		{[]int64{4, 0, 5}, 0, false},
		{[]int64{-1, 16}, 0, true},
		{[]int64{1 << 32, 1 << 32}, 0, true},
		{[]int64{0, 1 << 62, 1 << 62}, 0, false},
	}
	for _, tc := range tests {
		got, err := ElementCount(tc.shape)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ElementCount(%v) = %d, %v; want %d, err %v", tc.shape, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestTensorCheck(t *testing.T) {
	tests := []struct {
		name    string
		t       Tensor
		wantErr bool
	}{
		{"int32 ok", Tensor{"a", INT32, []int64{2}, make([]byte, 8)}, false},
		{"int32 short", Tensor{"a", INT32, []int64{2}, make([]byte, 7)}, true},
		{"scalar", Tensor{"a", FP64, nil, make([]byte, 8)}, false},
		{"variable dim", Tensor{"a", FP32, []int64{-1}, nil}, true},
		{"unknown type", Tensor{"a", "FLOAT", []int64{1}, make([]byte, 4)}, true},
		{"bytes ok", Tensor{"a", BYTES, []int64{2}, EncodeBytesElements([][]byte{[]byte("x"), nil})}, false},
		{"bytes count", Tensor{"a", BYTES, []int64{3}, EncodeBytesElements([][]byte{[]byte("x")})}, true},
		{"bytes truncated", Tensor{"a", BYTES, []int64{1}, []byte{5, 0, 0, 0, 'a'}}, true},
		{"empty", Tensor{"a", FP16, []int64{0, 3}, nil}, false},
	}
	for _, tc := range tests {
		if err := tc.t.Check(); (err != nil) != tc.wantErr {
			t.Errorf("%s: Check() = %v, wantErr %v", tc.name, err, tc.wantErr)
		}
	}
}
