// Package cuda reaches the CUDA runtime (libcudart) at run time, for CUDA
// shared memory: device buffers a local Triton reads and writes through
// CUDA IPC handles. perfscen builds without CUDA; on a machine without the
// runtime library or without a GPU, Load says which is missing.
package cuda
