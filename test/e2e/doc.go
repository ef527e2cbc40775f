// Package e2e holds end-to-end tests that drive the built perfscen binary
// as CI would (concurrent processes, files shared between them) and fuzz
// targets over exported parsers that no package owns a target for.
package e2e
