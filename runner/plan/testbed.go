package plan

import (
	"fmt"
	"regexp"
)

// testbedName is what a chosen testbed name may look like: it is a JSON
// key, a file-name-safe label in reports and something typed in CI
// settings.
var testbedName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// CheckTestbedName refuses names that would not survive as keys and labels.
func CheckTestbedName(name string) error {
	if !testbedName.MatchString(name) {
		return fmt.Errorf("testbed name %q: use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit", name)
	}
	return nil
}
