package refserver

import (
	"context"
	"sync"
)

// devices are the named devices models share (ParamDevice): a device runs
// one execution at a time, whichever model it belongs to, so one model's
// load queues another's executions the way two models sharing one GPU
// do. Model instances still decide how many executions of one model wait
// for the device at once.
type devices struct {
	mu    sync.Mutex
	slots map[string]chan struct{}
}

// acquire waits for the device name; release gives it back.
func (d *devices) acquire(ctx context.Context, name string) (release func(), err error) {
	d.mu.Lock()
	if d.slots == nil {
		d.slots = map[string]chan struct{}{}
	}
	slot, ok := d.slots[name]
	if !ok {
		slot = make(chan struct{}, 1)
		d.slots[name] = slot
	}
	d.mu.Unlock()
	select {
	case slot <- struct{}{}:
		return func() { <-slot }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
