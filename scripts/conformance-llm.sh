#!/usr/bin/env bash
# The shipped LLM scenarios against a real OpenAI-compatible server:
# Ollama at a pinned version serving a tiny random-weight llama model that
# scripts/ggufgen writes, on 127.0.0.1 only, from a temporary directory
# outside the repository. See docs/llm.md ("Against a real server").
#
#   OLLAMA=/path/to/ollama make conformance-llm    # an Ollama binary you built
#   make conformance-llm                           # go install of the pinned module into a temp dir
#
# Without OLLAMA the pinned module is fetched and built with cgo (CPU only)
# by the Go toolchain into the temporary directory; its C++ sources need
# headers the module zip leaves out (docs/llm.md says which, and where
# CGO_CPPFLAGS may point for them).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${OLLAMA_VERSION:=v0.17.4}"
: "${LLM_PORT:=18634}"
tmp=$(mktemp -d)
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

if [ -z "${OLLAMA:-}" ]; then
  echo "conformance-llm: building github.com/ollama/ollama@$OLLAMA_VERSION into $tmp (cgo, CPU only; this takes a while)"
  GOFLAGS=-mod=mod GOBIN="$tmp/bin" go install "github.com/ollama/ollama@$OLLAMA_VERSION"
  OLLAMA="$tmp/bin/ollama"
fi
go run ./scripts/ggufgen -o "$tmp/tiny.gguf"
# One compute thread: the model is 0.5 MB, and ggml's threads spin on a
# barrier at every layer, which on a busy 2-core machine turns a 10 ms
# request into seconds (32 tokens: 2.6 s with 2 threads, 10 ms with 1, at
# load 11), and the shipped scenarios' 30 s timeouts then trip at
# concurrency 32.
printf 'FROM %s\nPARAMETER num_thread 1\n' "$tmp/tiny.gguf" > "$tmp/Modelfile"

# Ollama's default of one sequence at a time unless OLLAMA_NUM_PARALLEL
# says otherwise.
: "${OLLAMA_NUM_PARALLEL:=1}"
export OLLAMA_HOST="127.0.0.1:$LLM_PORT" OLLAMA_MODELS="$tmp/models" OLLAMA_NUM_PARALLEL
"$OLLAMA" serve > "$tmp/ollama.log" 2>&1 &
server=$!
for _ in $(seq 1 100); do
  if curl -fsS "http://$OLLAMA_HOST/api/version" >/dev/null 2>&1; then break; fi
  sleep 0.2
done
"$OLLAMA" create tiny -f "$tmp/Modelfile"
"$OLLAMA" --version || true
echo "conformance-llm: $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg), OLLAMA_NUM_PARALLEL=$OLLAMA_NUM_PARALLEL"

if ! PERFSCEN_LLM_URL="http://$OLLAMA_HOST" PERFSCEN_LLM_MODEL=tiny \
  go test -count=1 -v -timeout 30m -run 'TestLLMAgainstARealServer|TestLLMWorkloadsAgainstARealServer' ./test/conformance ||
  ! PERFSCEN_LLM_URL="http://$OLLAMA_HOST" PERFSCEN_LLM_MODEL=tiny \
  go test -count=1 -v -timeout 10m -run TestPAOpenAISeedAgainstARealServer ./cmd/perfscen; then
  echo "conformance-llm: FAILED; the server's log ends:"
  tail -n 20 "$tmp/ollama.log"
  exit 1
fi
