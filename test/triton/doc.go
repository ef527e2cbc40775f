// Package triton holds the tests against the real Triton Inference Server
// kept beside the repository (../shared/triton relative to its root, or
// $PERFSCEN_TRITON_DIR): a conformance suite that runs every Triton-kind
// feature of perfscen against it, and a differential test that sends the
// same requests to it and to perfscen's reference server. TestMain starts
// one Triton for the whole package and stops it with SIGTERM; without the
// folder the package prints one SKIP line and runs nothing. It has no
// non-test code.
package triton
