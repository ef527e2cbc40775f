package procacct

import (
	"os"
	"os/exec"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

func TestCPUClocks(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := unix.Gettid()
	a, ok := ThreadCPUNs(tid)
	if !ok {
		t.Fatal("this thread's clock is unreadable")
	}
	spin(5_000_000)
	b, _ := ThreadCPUNs(tid)
	if b <= a {
		t.Fatalf("thread clock did not move: %d → %d", a, b)
	}
	p, ok := ProcessCPUNs(os.Getpid())
	if !ok || p < b-a {
		t.Fatalf("process clock %d, %v", p, ok)
	}
	// Another process's clock is readable: a child that burns CPU.
	cmd := exec.Command("sh", "-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; read x")
	in, _ := cmd.StdinPipe()
	if err := cmd.Start(); err != nil {
		t.Skip("no shell: ", err)
	}
	defer func() { in.Close(); cmd.Wait() }()
	var c uint64
	for c == 0 {
		c, ok = ProcessCPUNs(cmd.Process.Pid)
		if !ok {
			t.Fatal("a child's process clock is unreadable")
		}
	}
	gone := exec.Command("true")
	if err := gone.Run(); err == nil {
		if _, ok := ProcessCPUNs(gone.Process.Pid); ok {
			t.Fatal("a process that exited and was reaped has a clock")
		}
	}
}
