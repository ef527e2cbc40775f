package procacct

import "context"

// Reading is a source's cumulative counters at one moment. Only
// differences of two readings of one source mean anything.
type Reading struct {
	// CPUNs is the time the server's threads ran on a CPU.
	CPUNs uint64
	// RunQueueNs is the time they were runnable and waited for a CPU;
	// HaveRunQueue is false where the source cannot see it (a remote
	// server's process_cpu_seconds_total).
	RunQueueNs   uint64
	HaveRunQueue bool
	// PreemptNs is the part of RunQueueNs that followed a preemption
	// (the thread was switched out while it still had work) rather than a
	// wake-up: time-slicing in the middle of the work, which no wake-up
	// shows. The kernel does not split the wait, so each thread's wait
	// over an interval is shared out in proportion to its involuntary and
	// voluntary context switches in it (/proc/…/status); a thread that
	// waited without switching at all (runnable throughout) counts as
	// preempted; one whose switches are missing (it exited between the
	// two reads) counts its whole wait. HavePreempt is false where no
	// thread's switches can be read, and for the embedded server's model
	// threads (Threads), which are on their requests' path whatever woke
	// them.
	PreemptNs   uint64
	HavePreempt bool
	// Instructions retired, where hardware counters could be opened.
	Instructions     uint64
	HaveInstructions bool
	// Inferences, when HaveInferences, are the source's own count of the
	// inferences its time was spent on (the embedded server counts per
	// model); otherwise the caller divides by the inferences it saw.
	Inferences     uint64
	HaveInferences bool
	// Threads is how many threads the reading summed (0 where unknown).
	Threads int
	// CPUNsByCPU is the part of CPUNs charged to each CPU by sampling
	// (cpusplit.go), indexed by CPU id; nil where nothing sampled it.
	// What ran between the last sample and the reading is in CPUNs only.
	CPUNsByCPU []uint64
}

// Delta is what happened between two readings a (earlier) and b. ok is
// false when a counter went backwards (the process restarted) or the two
// disagree on what they measured.
func Delta(a, b Reading) (d Reading, ok bool) {
	if b.CPUNs < a.CPUNs {
		return Reading{}, false
	}
	d.CPUNs = b.CPUNs - a.CPUNs
	if a.HaveRunQueue && b.HaveRunQueue {
		if b.RunQueueNs < a.RunQueueNs {
			return Reading{}, false
		}
		d.RunQueueNs, d.HaveRunQueue = b.RunQueueNs-a.RunQueueNs, true
	}
	if a.HavePreempt && b.HavePreempt && b.PreemptNs >= a.PreemptNs {
		d.PreemptNs, d.HavePreempt = b.PreemptNs-a.PreemptNs, true
	}
	if a.HaveInstructions && b.HaveInstructions && b.Instructions >= a.Instructions {
		d.Instructions, d.HaveInstructions = b.Instructions-a.Instructions, true
	}
	if a.HaveInferences && b.HaveInferences {
		if b.Inferences < a.Inferences {
			return Reading{}, false
		}
		d.Inferences, d.HaveInferences = b.Inferences-a.Inferences, true
	}
	d.Threads = b.Threads
	if len(b.CPUNsByCPU) > 0 {
		d.CPUNsByCPU = make([]uint64, len(b.CPUNsByCPU))
		for i, v := range b.CPUNsByCPU {
			var was uint64
			if i < len(a.CPUNsByCPU) {
				was = a.CPUNsByCPU[i]
			}
			if v >= was {
				d.CPUNsByCPU[i] = v - was
			}
		}
	}
	return d, true
}

// Source is one server's accounting.
type Source interface {
	// Read returns the cumulative counters. A source that can tell models
	// apart (PerModel) returns model's; the others ignore model and
	// return the whole server's.
	Read(ctx context.Context, model string) (Reading, error)
	// PerModel says whether Read separates models. A whole-server source
	// only describes a window in which one model was under load.
	PerModel() bool
	// Beside says the server is another process on this machine: its
	// CPU time is part of what the machine-wide signals call "other
	// processes", and can be taken out of them.
	Beside() bool
	// Describe says in a few words what is measured, for the run's notes.
	Describe() string
	// Notes are remarks made once, e.g. that instructions are not counted
	// because the machine has no hardware counters.
	Notes() []string
	Close() error
}
