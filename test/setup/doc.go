// Package setup holds the tests of scripts/deps.sh, which make test and
// the other make targets run first: on a fresh Debian machine it installs
// what each feature needs (as root) and says so in one line, and where it
// may not install, it names the packages, stopping for what is required.
package setup
