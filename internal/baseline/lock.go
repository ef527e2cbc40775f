package baseline

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Lock takes an exclusive advisory lock for updating the baseline at path,
// blocking until it is free, so that two updates of one baseline never
// interleave their read-modify-write. flock locks belong to the open file
// description, so they also exclude goroutines of one process.
//
// The lock is taken on the baseline's folder, not on a file beside it: a
// sibling "path.lock" outlived every update and sat in users'
// repositories, which did not ignore it; locking the file itself would not
// do either, as Save replaces it (a rename, a new inode). Updates of other
// baselines in the same folder wait their turn, which costs a few
// milliseconds.
func Lock(path string) (unlock func() error, err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("locking baseline: %w", err)
	}
	f, err := os.Open(dir)
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
		return nil, fmt.Errorf("locking baseline folder %s: %w", dir, err)
	}
	return func() error {
		uerr := unix.Flock(int(f.Fd()), unix.LOCK_UN)
		cerr := f.Close()
		if uerr != nil {
			return fmt.Errorf("unlocking baseline folder %s: %w", dir, uerr)
		}
		return cerr
	}, nil
}
