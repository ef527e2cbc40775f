// Package kinds is the small interface every service kind implements for
// the runner and the engine: Kind opens a server (reached, or its embedded
// flavour started) and checks what the scenario needs of it; Server
// prepares points; Point hands out per-worker Callers and reads the
// server's counters; Caller sends one request and times it. Each kind
// lives in a folder below this one; internal/kinds/all lists them.
//
// Adding a kind touches its folder, one line in internal/kinds/all/all.go
// and the files generated from them, besides the user documentation
// (docs/scenario.md):
//
//  1. internal/kinds/<kind>/: the Kind (Name, Open, Facts) and all it
//     needs. Facts are what the scenario knows of the kind before any of
//     its code runs: a few words for the server.kind description, the
//     JSON Schema of its server.<kind> block (settings.schema.json beside
//     the code, embedded; it may refer to the scenario schema's $defs,
//     such as #/$defs/duration), the protocol its points default to and
//     whether it starts its server in process (no url). Open reads the
//     block with DecodeOptions.
//  2. internal/kinds/all/all.go: the kind's line (the order there is the
//     order of the server.kind enum).
//  3. go generate ./schemas: rewrites the generated part of
//     schemas/scenario.schema.json (from "kind" to the end of
//     $defs.server.properties: the enum and every kind's block) and
//     schemas/kinds_gen.go (the traits the scenario resolves with). A test
//     in internal/kinds/all/gen fails while they are stale.
//
// Rules that pair kinds (openai servers are compared with openai servers
// only) stay in the scenario package.
package kinds
