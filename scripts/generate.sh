#!/usr/bin/env bash
# Regenerates the Go code for internal/kservev2/inferencepb and
# internal/kinds/tfserving/tfservingpb from our hand-written .proto files.
# Plugin versions are pinned so the committed output is reproducible.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

PROTOC_GEN_GO_VERSION=v1.36.12
PROTOC_GEN_GO_GRPC_VERSION=v1.6.2

command -v protoc >/dev/null || {
	echo "generate.sh: protoc not found (Debian/Ubuntu: apt-get install protobuf-compiler)" >&2
	exit 1
}

mkdir -p bin
GOBIN="$root/bin" go install "google.golang.org/protobuf/cmd/protoc-gen-go@${PROTOC_GEN_GO_VERSION}"
GOBIN="$root/bin" go install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@${PROTOC_GEN_GO_GRPC_VERSION}"

PATH="$root/bin:$PATH" protoc \
	-I internal/kservev2/inferencepb \
	--go_out=internal/kservev2/inferencepb --go_opt=paths=source_relative \
	--go-grpc_out=internal/kservev2/inferencepb --go-grpc_opt=paths=source_relative \
	internal/kservev2/inferencepb/model_config.proto internal/kservev2/inferencepb/grpc_service.proto

# kind grpc: the embedded demo service (internal/kinds/grpc/demopb).
PATH="$root/bin:$PATH" protoc \
	-I internal/kinds/grpc/demopb \
	--go_out=internal/kinds/grpc/demopb --go_opt=module=github.com/perfscen/perfscen/internal/kinds/grpc/demopb \
	--go-grpc_out=internal/kinds/grpc/demopb --go-grpc_opt=module=github.com/perfscen/perfscen/internal/kinds/grpc/demopb \
	perfscen/demo/v1/demo.proto
# TF Serving: the .proto files keep upstream's import paths (tensorflow/...,
# tensorflow_serving/...) so the registered file names and full names are
# TensorFlow Serving's; module= flattens them into one Go package.
tfpkg=internal/kinds/tfserving/tfservingpb
(cd "$tfpkg" && PATH="$root/bin:$PATH" protoc -I . \
	--go_out=. --go_opt=module=github.com/perfscen/perfscen/$tfpkg \
	--go-grpc_out=. --go-grpc_opt=module=github.com/perfscen/perfscen/$tfpkg \
	$(find . -name '*.proto' | LC_ALL=C sort))

# The coordinator protocol of distributed runs (internal/fleet/fleetpb, our
# own .proto).
PATH="$root/bin:$PATH" protoc \
	-I internal/fleet/fleetpb \
	--go_out=internal/fleet/fleetpb --go_opt=paths=source_relative \
	--go-grpc_out=internal/fleet/fleetpb --go-grpc_opt=paths=source_relative \
	internal/fleet/fleetpb/fleet.proto
