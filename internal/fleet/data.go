package fleet

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/perfscen/perfscen/runner/plan"
)

// DataDigest is the sha256 of the input-data files p's models name:
// every file (a directory's, in lexical order), by its name relative to
// the scenario's directory and its bytes. Agents and their coordinator
// compare it as they compare the scenario's own hash: an agent with
// other data would send other requests under the same scenario. It is
// "" when the scenario names no files; files lists them for messages.
func DataDigest(p *plan.Plan) (digest string, files []string, err error) {
	if p == nil {
		return "", nil, nil
	}
	base := filepath.Dir(p.ScenarioPath)
	h := sha256.New()
	seen := map[string]bool{}
	for _, m := range p.Models {
		for _, path := range m.Input.Paths {
			if seen[path] {
				continue
			}
			seen[path] = true
			files = append(files, relTo(base, path))
			err := filepath.WalkDir(path, func(f string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				return hashFile(h, relTo(base, f), f)
			})
			if err != nil {
				return "", nil, fmt.Errorf("%s: input data: %w", m.Alias, err)
			}
		}
	}
	if len(files) == 0 {
		return "", nil, nil
	}
	return hex.EncodeToString(h.Sum(nil)), files, nil
}

// hashFile adds a file's name and bytes, each length-prefixed, so no two
// sets of files hash alike by moving bytes from one to the next.
func hashFile(h io.Writer, name, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(name)))
	h.Write(n[:])
	io.WriteString(h, name)
	binary.BigEndian.PutUint64(n[:], uint64(st.Size()))
	h.Write(n[:])
	_, err = io.Copy(h, f)
	return err
}

func relTo(base, path string) string {
	if rel, err := filepath.Rel(base, path); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return filepath.ToSlash(path)
}
