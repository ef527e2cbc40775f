// Package llmsim is the reference server's OpenAI-compatible endpoint: simulated
// LLM engines whose prefill time grows with the prompt and whose decode step
// grows with the sequences in flight (continuous batching), with
// deterministic token streams and injected faults, so LLM scenarios run end
// to end with nothing else installed.
package llmsim
