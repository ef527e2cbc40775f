package main

import (
	"context"
	"fmt"
	"time"

	"github.com/perfscen/perfscen/internal/kinds/kserve"
	"github.com/perfscen/perfscen/internal/pacompat"
	"github.com/perfscen/perfscen/scenario"
)

// paModelProbeTimeout bounds the one question pa asks the server before
// it measures; a server that does not answer in time is left to the run,
// which reports it.
const paModelProbeTimeout = 5 * time.Second

// paSequenceModel asks a Triton server, as perf_analyzer does before it
// measures, whether the model's configuration has a sequence batcher.
// asked is false when the server could not say (unreachable, or a command
// line that does not load: the run reports why).
func paSequenceModel(e *env, p *pacompat.Params, sc *pacompat.Scenario) (seq, asked bool, why error) {
	if p.ServiceKind != "triton" || p.SequenceModel {
		return false, false, nil
	}
	s, err := scenario.Parse("perf_analyzer-command-line.yaml", sc.YAML, e.getenv)
	if err != nil {
		return false, false, err
	}
	pl, err := scenario.Expand(s)
	if err != nil || len(pl.Models) == 0 {
		return false, false, err
	}
	ctx, cancel := context.WithTimeout(e.ctx, paModelProbeTimeout)
	defer cancel()
	seq, err = kserve.HasSequenceBatcher(ctx, pl, pl.Models[0], e.net.DialFunc())
	if err != nil {
		return false, false, err
	}
	return seq, true, nil
}

// settleModel settles the command line against the model as perf_analyzer
// does once it has read its configuration, and rebuilds the scenario when
// that changes it.
func settleModel(e *env, p *pacompat.Params, sc *pacompat.Scenario, rest []string, file string) (*pacompat.Scenario, error) {
	emit := file != ""
	seq, asked, why := paSequenceModel(e, p, sc)
	switch {
	case seq:
		if err := p.SetSequenceModel(); err != nil {
			return nil, err
		}
		return pacompat.BuildScenario(p, rest, file)
	case !asked && emit && p.ServiceKind == "triton" && !p.SequenceModel && !sc.Sequence:
		sc.Notes = append(sc.Notes, fmt.Sprintf("could not read %s's configuration from %s (%v): if it is a sequence model (sequence_batching), set models[0].sequence: true, which perf_analyzer would find there", p.ModelName, p.URL, why))
	}
	return sc, nil
}
