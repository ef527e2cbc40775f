package engine

import (
	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/kserve"
)

type inputdataStep struct{ in, want kserve.Tensor }

func seqData(streams [][]inputdataStep) *inputdata.Data {
	d := &inputdata.Data{Sequences: true, BatchSize: 1}
	for _, s := range streams {
		var steps []inputdata.Step
		for _, st := range s {
			steps = append(steps, inputdata.Step{Inputs: []kserve.Tensor{st.in}, Expected: []kserve.Tensor{st.want}})
		}
		d.Streams = append(d.Streams, steps)
	}
	return d
}
