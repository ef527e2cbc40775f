package refserver

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/perfscen/perfscen/internal/tensor"
)

// batchKey groups jobs that may share one execution: equal non-batch dims
// for every input.
func batchKey(inputs []tensorBuf) string {
	var b strings.Builder
	for _, in := range inputs {
		for _, d := range in.shape[1:] {
			b.WriteString(strconv.FormatInt(d, 10))
			b.WriteByte(',')
		}
		b.WriteByte(';')
	}
	return b.String()
}

// mergeInputs concatenates the jobs' inputs along the batch dimension.
func mergeInputs(jobs []*job, total int) []tensorBuf {
	if len(jobs) == 1 {
		return jobs[0].inputs
	}
	out := make([]tensorBuf, len(jobs[0].inputs))
	for i := range out {
		n := 0
		for _, j := range jobs {
			n += len(j.inputs[i].raw)
		}
		raw := make([]byte, 0, n)
		for _, j := range jobs {
			raw = append(raw, j.inputs[i].raw...)
		}
		shape := append([]int64{int64(total)}, jobs[0].inputs[i].shape[1:]...)
		out[i] = tensorBuf{shape: shape, raw: raw}
	}
	return out
}

// splitOutput cuts one merged output back into per-job pieces of the given
// batch sizes.
func splitOutput(t tensorBuf, dt tensor.DataType, sizes []int) ([]tensorBuf, error) {
	if len(sizes) == 1 {
		return []tensorBuf{t}, nil
	}
	total := 0
	for _, s := range sizes {
		total += s
	}
	if len(t.shape) == 0 || t.shape[0] != int64(total) {
		return nil, fmt.Errorf("model output shape %v does not start with the batch size %d", t.shape, total)
	}
	per, err := tensor.ElementCount(t.shape[1:])
	if err != nil {
		return nil, err
	}
	out := make([]tensorBuf, len(sizes))
	off := 0
	for k, s := range sizes {
		var n int
		if dt == tensor.BYTES {
			n, err = bytesSpan(t.raw[off:], int(per)*s)
			if err != nil {
				return nil, err
			}
		} else {
			n = int(per) * s * dt.Size()
		}
		if off+n > len(t.raw) {
			return nil, fmt.Errorf("model output of %d bytes is short for batch sizes %v", len(t.raw), sizes)
		}
		shape := append([]int64{int64(s)}, t.shape[1:]...)
		out[k] = tensorBuf{shape: shape, raw: t.raw[off : off+n : off+n]}
		off += n
	}
	return out, nil
}

// bytesSpan is the byte length of the first n length-prefixed elements.
func bytesSpan(raw []byte, n int) (int, error) {
	off := 0
	for range n {
		if len(raw)-off < 4 {
			return 0, fmt.Errorf("BYTES output truncated at offset %d", off)
		}
		l := int(binary.LittleEndian.Uint32(raw[off:]))
		if l > len(raw)-off-4 {
			return 0, fmt.Errorf("BYTES output element at offset %d overruns", off)
		}
		off += 4 + l
	}
	return off, nil
}
