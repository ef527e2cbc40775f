// Package openai is the client of the OpenAI-compatible service kind
// (vLLM, TensorRT-LLM, Triton's OpenAI frontend, TGI, NIM): it sends chat
// and text completion requests, reads streamed replies as server-sent
// events, and reports token timing as a client.TokenTrace. It also builds
// request bodies from perf_analyzer's OpenAI input data and from synthetic
// prompt-length distributions.
package openai
