// Package procacct measures a server's own use of the CPUs: the CPU time
// its threads ran, the time they waited runnable for a CPU (run-queue
// delay, which includes being preempted in the middle of a request), and,
// where the machine has hardware counters, the instructions they retired.
//
// Divided by the inferences of a window, these are the figures a busy
// machine cannot move much: a neighbour that time-slices a CPU-bound model
// stretches its wall-clock compute time (server_compute_infer) by the run
// queue delay, but its CPU time per inference stays where the build put
// it. They come from the kernel's per-thread schedstat
// (/proc/PID/task/TID/schedstat), so a server on the same machine is
// measured whatever it is written in: the embedded server's model threads,
// a process found from its listening socket, named by PID or by cgroup.
// A server on another machine can only say its CPU time, through the
// Prometheus process_cpu_seconds_total most client libraries export.
package procacct
