package validate

import (
	"testing"

	"github.com/perfscen/perfscen/internal/tensor"
)

// BenchmarkCompareFP32 measures the untimed-but-not-free cost of checking a
// 150k-element output (a 224x224x3 image-sized tensor).
func BenchmarkCompareFP32(b *testing.B) {
	v := make([]float64, 224*224*3)
	for i := range v {
		v[i] = float64(i%1000) / 7
	}
	want := f32("O", []int64{int64(len(v))}, v...)
	got := Tensor{Name: "O", DataType: string(tensor.FP32), Shape: want.Shape, Data: append([]byte(nil), want.Data...)}
	b.SetBytes(int64(len(want.Data)))
	for b.Loop() {
		if r := Compare([]Tensor{want}, []Tensor{got}, Options{}); !r.OK() {
			b.Fatal(r)
		}
	}
}

func BenchmarkCompareINT32(b *testing.B) {
	v := make([]float64, 224*224*3)
	want := typed("O", tensor.INT32, v...)
	got := Tensor{Name: "O", DataType: string(tensor.INT32), Shape: want.Shape, Data: append([]byte(nil), want.Data...)}
	b.SetBytes(int64(len(want.Data)))
	for b.Loop() {
		Compare([]Tensor{want}, []Tensor{got}, Options{})
	}
}

// BenchmarkCompareFP32Close is the worst case: every element differs a
// little (say FP16 TensorRT against an FP32 reference) and goes through cmp.
func BenchmarkCompareFP32Close(b *testing.B) {
	v := make([]float64, 224*224*3)
	u := make([]float64, len(v))
	for i := range v {
		v[i] = float64(i%1000) / 7
		u[i] = v[i] * (1 + 1e-6)
	}
	want := f32("O", []int64{int64(len(v))}, v...)
	got := f32("O", []int64{int64(len(v))}, u...)
	b.SetBytes(int64(len(want.Data)))
	for b.Loop() {
		if r := Compare([]Tensor{want}, []Tensor{got}, Options{}); !r.OK() {
			b.Fatal(r)
		}
	}
}
