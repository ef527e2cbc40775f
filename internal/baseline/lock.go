package baseline

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Lock takes an exclusive advisory lock on a sibling of path (path +
// ".lock"), blocking until it is free, so that two updates of one baseline
// never interleave their read-modify-write. flock locks belong to the open
// file description, so they also exclude goroutines of one process.
func Lock(path string) (unlock func() error, err error) {
	lp := path + ".lock"
	if err := os.MkdirAll(filepath.Dir(lp), 0o755); err != nil {
		return nil, fmt.Errorf("locking baseline: %w", err)
	}
	f, err := os.OpenFile(lp, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("locking baseline: %w", err)
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking baseline %s: %w", lp, err)
	}
	return func() error {
		uerr := unix.Flock(int(f.Fd()), unix.LOCK_UN)
		cerr := f.Close()
		if uerr != nil {
			return fmt.Errorf("unlocking baseline %s: %w", lp, uerr)
		}
		return cerr
	}, nil
}
