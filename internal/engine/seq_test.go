package engine

import (
	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/tensor"
)

type inputdataStep struct{ in, want tensor.Tensor }

func seqData(streams [][]inputdataStep) *inputdata.Data {
	d := &inputdata.Data{Sequences: true, BatchSize: 1}
	for _, s := range streams {
		var steps []inputdata.Step
		for _, st := range s {
			steps = append(steps, inputdata.Step{Inputs: []tensor.Tensor{st.in}, Expected: []tensor.Tensor{st.want}})
		}
		d.Streams = append(d.Streams, steps)
	}
	return d
}
