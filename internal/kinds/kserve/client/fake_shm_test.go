package client

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The fakes access registered system shared memory through its /dev/shm
// file, as Triton does through shm_open, so the client's whole shm path is
// exercised: create, write, register, reference, read back.

func shmFile(key string) string { return filepath.Join("/dev/shm", strings.TrimLeft(key, "/")) }

func readShm(key string, regionOffset, offset, size uint64) ([]byte, error) {
	f, err := os.Open(shmFile(key))
	if err != nil {
		return nil, fmt.Errorf("opening shm key %q: %w", key, err)
	}
	defer f.Close()
	buf := make([]byte, size)
	if _, err := f.ReadAt(buf, int64(regionOffset+offset)); err != nil {
		return nil, fmt.Errorf("reading shm key %q: %w", key, err)
	}
	return buf, nil
}

func writeShm(key string, regionOffset, offset uint64, data []byte) error {
	f, err := os.OpenFile(shmFile(key), os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("opening shm key %q: %w", key, err)
	}
	defer f.Close()
	_, err = f.WriteAt(data, int64(regionOffset+offset))
	return err
}
