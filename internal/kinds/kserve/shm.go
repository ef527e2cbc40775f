package kserve

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/perfscen/perfscen/internal/cuda"
	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/kinds/kserve/client"
	"github.com/perfscen/perfscen/internal/shm"
	"github.com/perfscen/perfscen/internal/tensor"
	"github.com/perfscen/perfscen/runner/plan"
)

// ErrCUDA marks points asking for CUDA shared memory on a machine where
// the CUDA runtime or a GPU is missing.
var ErrCUDA = errors.New("shared_memory: cuda needs the CUDA runtime (libcudart) and a GPU on the client's machine")

// defaultOutputShmSize is perf_analyzer's --output-shared-memory-size, per
// batch element, used when an output's size cannot be derived.
const defaultOutputShmSize = 102400

// shmSet owns a point's system shared-memory regions: one per input
// holding every distinct step's tensor at its own offset, and per live
// caller one region per output so concurrent responses never overlap. A
// caller's output regions go back to the set when it closes and the next
// caller (of a later session: warm-up, trial, interleaved round) reuses
// them, so a point registers each region once whatever number of sessions
// it runs. close unregisters and unlinks everything it made, whatever
// happened before.
type shmSet struct {
	client client.Client
	prefix string        // region names and keys start with this
	cuda   *cuda.Runtime // nil: system shared memory

	inputRefs [][]client.ShmRef // [flat step][input]
	outNames  []string
	outSizes  []uint64

	mu      sync.Mutex
	regions []memRegion
	names   []string         // registered with the server
	reg     []memRegion      // names' regions
	free    []*workerOutputs // output sets of closed callers, for reuse
	outSets int              // output sets made, for unique region names
}

// newShmSet creates and registers the input regions of data. outSizes are
// the output regions' sizes (see outputShmSizes).
func newShmSet(ctx context.Context, c client.Client, rt *cuda.Runtime, tag string, d *inputdata.Data, outNames []string, outSizes []uint64) (_ *shmSet, err error) {
	s := &shmSet{client: c, cuda: rt, prefix: strings.TrimPrefix(shm.NewKey(tag), "/")}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	var steps []inputdata.Step
	for _, st := range d.Streams {
		steps = append(steps, st...)
	}
	nIn := len(steps[0].Inputs)
	s.inputRefs = make([][]client.ShmRef, len(steps))
	for i := range s.inputRefs {
		s.inputRefs[i] = make([]client.ShmRef, nIn)
	}
	for k := 0; k < nIn; k++ {
		total := 0
		for _, st := range steps {
			total += len(st.Inputs[k].Raw)
		}
		name := fmt.Sprintf("%s_in%d", s.prefix, k)
		r, err := s.create(ctx, name, max(total, 1))
		if err != nil {
			return nil, err
		}
		off := 0
		for i, st := range steps {
			raw := st.Inputs[k].Raw
			if err := r.write(off, raw); err != nil {
				return nil, err
			}
			s.inputRefs[i][k] = client.ShmRef{Region: name, Offset: uint64(off), ByteSize: uint64(len(raw))}
			off += len(raw)
		}
	}
	s.outNames, s.outSizes = outNames, outSizes
	return s, nil
}

func (s *shmSet) create(ctx context.Context, name string, size int) (memRegion, error) {
	var r memRegion
	var err error
	if s.cuda != nil {
		r, err = newCUDARegion(s.cuda, cudaDevice, size)
	} else {
		r, err = newSysRegion(name, size)
	}
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.regions = append(s.regions, r)
	s.mu.Unlock()
	if err := r.register(ctx, s.client, name); err != nil {
		return nil, fmt.Errorf("registering shared memory region %s: %w", name, err)
	}
	s.mu.Lock()
	s.names = append(s.names, name)
	s.reg = append(s.reg, r)
	s.mu.Unlock()
	return r, nil
}

func (s *shmSet) inputRef(step, input int) client.ShmRef { return s.inputRefs[step][input] }

// workerOutputs are one worker's output regions.
type workerOutputs struct {
	requested []client.RequestedOutput
	regions   []memRegion
}

// workerOutputs gives a caller output regions of its own: a set a closed
// caller gave back, or a new one. Region names number the sets, not the
// workers, so two sessions of a point never ask for one name twice.
func (s *shmSet) workerOutputs(ctx context.Context) (*workerOutputs, error) {
	s.mu.Lock()
	if n := len(s.free); n > 0 {
		o := s.free[n-1]
		s.free = s.free[:n-1]
		s.mu.Unlock()
		return o, nil
	}
	set := s.outSets
	s.outSets++
	s.mu.Unlock()
	o := &workerOutputs{}
	for k, name := range s.outNames {
		region := fmt.Sprintf("%s_o%d_out%d", s.prefix, set, k)
		r, err := s.create(ctx, region, int(s.outSizes[k]))
		if err != nil {
			return nil, err
		}
		o.regions = append(o.regions, r)
		o.requested = append(o.requested, client.RequestedOutput{Name: name,
			Shm: &client.ShmRef{Region: region, ByteSize: s.outSizes[k]}})
	}
	return o, nil
}

// release gives a closed caller's output regions back for reuse; they
// stay registered until close. No request may be in flight on them.
func (s *shmSet) release(o *workerOutputs) {
	if s == nil || o == nil {
		return
	}
	s.mu.Lock()
	s.free = append(s.free, o)
	s.mu.Unlock()
}

// read returns the outputs of a response whose data the server wrote into
// this worker's regions. The tensors alias the regions; use them before the
// worker's next request.
func (o *workerOutputs) read(outs []tensor.Tensor) ([]tensor.Tensor, error) {
	got := make([]tensor.Tensor, 0, len(outs))
	for _, t := range outs {
		k := -1
		for i, ro := range o.requested {
			if ro.Name == t.Name {
				k = i
			}
		}
		if k < 0 {
			got = append(got, t)
			continue
		}
		if err := o.regions[k].sync(); err != nil {
			return nil, fmt.Errorf("output %s in shared memory: %w", t.Name, err)
		}
		buf := o.regions[k].Bytes()
		n, err := rawLen(t, buf)
		if err != nil {
			return nil, fmt.Errorf("output %s in shared memory: %w", t.Name, err)
		}
		t.Raw = buf[:n]
		got = append(got, t)
	}
	return got, nil
}

// rawLen is the byte length of t's data at the start of buf.
func rawLen(t tensor.Tensor, buf []byte) (int, error) {
	if t.DataType != tensor.BYTES {
		n, err := tensor.ByteSize(t.DataType, t.Shape)
		if err != nil {
			return 0, err
		}
		if n > int64(len(buf)) {
			return 0, fmt.Errorf("needs %d bytes, region holds %d", n, len(buf))
		}
		return int(n), nil
	}
	count, err := tensor.ElementCount(t.Shape)
	if err != nil {
		return 0, err
	}
	off := 0
	for i := int64(0); i < count; i++ {
		if off+4 > len(buf) {
			return 0, fmt.Errorf("BYTES element %d runs past the region", i)
		}
		off += 4 + int(binary.LittleEndian.Uint32(buf[off:]))
		if off > len(buf) {
			return 0, fmt.Errorf("BYTES element %d runs past the region", i)
		}
	}
	return off, nil
}

// close unregisters and unlinks every region, even if ctx is done (cleanup
// gets its own short deadline).
func (s *shmSet) close() error {
	if s == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for i, name := range s.names {
		if err := s.reg[i].unregister(ctx, s.client, name); err != nil {
			errs = append(errs, fmt.Errorf("unregistering shared memory region %s: %w", name, err))
		}
	}
	for _, r := range s.regions {
		if err := r.free(); err != nil {
			errs = append(errs, err)
		}
	}
	s.names, s.reg, s.regions, s.free = nil, nil, nil, nil
	return errors.Join(errs...)
}

// shmMode checks a point's shared_memory setting: use says whether the
// point uses shared memory at all, rt is the CUDA runtime for cuda.
func shmMode(mode plan.SharedMemory) (use bool, rt *cuda.Runtime, err error) {
	switch mode {
	case "", plan.ShmNone:
		return false, nil, nil
	case plan.ShmSystem:
		return true, nil, nil
	case plan.ShmCUDA:
		rt, err := cudaRuntime()
		if err != nil {
			return false, nil, failure.Invalid(err)
		}
		return true, rt, nil
	}
	return false, nil, failure.Invalid(fmt.Errorf("shared_memory %q isn't one of [none, system, cuda]", mode))
}

// cleanupTimeout bounds shared-memory unregistration after a stop.
const cleanupTimeout = 5 * time.Second
