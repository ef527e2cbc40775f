package validate_test

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/perfscen/perfscen/validate"
)

func fp32(name string, v ...float32) validate.Tensor {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return validate.Tensor{Name: name, DataType: "FP32", Shape: []int64{int64(len(v))}, Data: b}
}

// Compare a model's outputs with expected ones: floats within a
// tolerance, everything else exactly.
func ExampleCompare() {
	expected := []validate.Tensor{fp32("scores", 0.1, 0.7, 0.2)}
	close := []validate.Tensor{fp32("scores", 0.1000001, 0.6999999, 0.2)}
	wrong := []validate.Tensor{fp32("scores", 0.1, 0.2, 0.7)}
	fmt.Println(validate.Compare(expected, close, validate.Options{}))
	fmt.Println(validate.Compare(expected, wrong, validate.Options{MaxReported: 1}))
	// Output:
	// ok (3 elements)
	// scores[1]: expected 0.699999988079071, got 0.20000000298023224
	// ... and 1 more mismatches (3 elements checked)
}
