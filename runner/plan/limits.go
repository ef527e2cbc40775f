package plan

// MaxConcurrency is the most requests a point may keep outstanding, over
// all its agents. Each outstanding request is a worker of its own (a
// goroutine, its buffers, and for HTTP and kind kserve's own connections
// a socket): WorkerBytes each, so a million would need some 61 GiB and
// hold the process for minutes at start and at an interrupt. A scenario
// that asks for more is refused (exit 2) by perfscen validate as by run;
// an unbounded linear search stops probing here.
const MaxConcurrency = 65536

// WorkerBytes is the memory one worker takes, measured: 4096 workers of
// kind kserve over HTTP against the embedded server (both ends in one
// process) grew perfscen's RSS by 270–290 MB, about 68 KB each.
const WorkerBytes = 64 << 10
