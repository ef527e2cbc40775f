//go:build linux

package tritoncapi

// Symbols are the C API functions perfscen looks up, for tests that
// build a stand-in library.
var Symbols = symbols

// APIVersion is the C API version the code was written for.
const APIMajor, APIMinor = apiMajor, apiMinor
