#!/usr/bin/env bash
# What a make target needs beyond Go and make, by feature: checked with
# dpkg-query and, where missing, installed with apt-get (as root, or with
# passwordless sudo), then said in one line. make test, make image,
# make image-check and make screenshots run it first; .ci/run relies on
# make test doing so, so a fresh machine and CI take the same path.
#
#   scripts/deps.sh test          what make test needs (below)
#   scripts/deps.sh FEATURE...    image, screenshots, or any feature below
#
# Features and their Debian 12 packages:
#   cc          gcc: the race detector (go test -race) and the C API kind's
#               callbacks need cgo                                   required
#   triton      the real Triton's runtime (../shared/triton/README.md), when
#               ../shared/triton exists                              required
#   torchserve  TorchServe 0.12.0's Java and Python runtime
#               (../shared/torchserve/README.md), when ../shared/torchserve
#               exists                                               required
#   grpcio      python3-grpcio: kind grpc against a Python grpcio server
#   netns       iproute2: the multi-host tests' network namespaces (as root)
#   protoc      protobuf-compiler, and libprotobuf-dev for protoc's
#               well-known types: kind grpc's imports against protoc's own
#   image       podman, runc, debootstrap, debian-archive-keyring,
#               ca-certificates (docs/distributed.md)                required
#   screenshots chromium (make screenshots)                          required
# test is cc, triton, torchserve, grpcio, netns and protoc. A required
# feature that is missing and cannot be installed stops with the apt-get
# line to run (exit 1); an optional one says which tests will SKIP.
#
# Settings: PERFSCEN_DEPS=check (say what is missing, install nothing),
# PERFSCEN_SHARED (the folder holding triton/ and torchserve/; default
# ../shared beside the checkout, or beside a worktree's main checkout),
# PERFSCEN_TRITON_DIR (the Triton folder, as the tests read it).
set -euo pipefail
cd "$(dirname "$0")/.."

TRITON_PKGS="libgrpc++1.51 libprotobuf32 libre2-9 libevent-2.1-7 libb64-0d libnuma1 libssl3 zlib1g
  libprometheus-cpp-core1.0 libpython3.11 python3-numpy libarchive13"
TORCHSERVE_PKGS="openjdk-17-jre-headless libnetty-java libgrpc-java libprotobuf-java libgoogle-common-protos-java
  libguava-java libperfmark-java libgoogle-gson-java libcommons-cli-java libcommons-io-java libcommons-compress-java
  libslf4j-java liblog4j2-java libdisruptor-java libyaml-snake-java python3-torch python3-psutil python3-yaml
  python3-packaging"

# shared is the folder holding the real servers, or "" when there is none.
shared() {
	if [ -n "${PERFSCEN_SHARED:-}" ]; then
		echo "$PERFSCEN_SHARED"
		return
	fi
	local d
	for d in ../shared "$(dirname "$(git rev-parse --path-format=absolute --git-common-dir 2>/dev/null || echo .)")/../shared"; do
		if [ -d "$d" ]; then
			(cd "$d" && pwd)
			return
		fi
	done
}

root_cmd() {
	if [ "$(id -u)" = 0 ]; then
		echo ""
	elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
		echo "sudo -n"
	else
		echo none
	fi
}

missing() {
	local p out=()
	for p in "$@"; do
		[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null | awk '{print $3}')" = installed ] || out+=("$p")
	done
	echo "${out[*]}"
}

updated=""
# install PKGS: installs them when allowed; returns 1 when it may not, 2
# when apt-get failed (its output in $log).
install() {
	[ "${PERFSCEN_DEPS:-}" != check ] || return 1
	command -v apt-get >/dev/null 2>&1 || return 1
	local as
	as=$(root_cmd)
	[ "$as" != none ] || return 1
	log=$(mktemp /tmp/perfscen-deps.XXXXXX)
	export DEBIAN_FRONTEND=noninteractive
	# One update for all features; one that failed (an unreachable or
	# unverifiable mirror) is not retried for each.
	[ "$updated" != failed ] || return 2
	if [ -z "$updated" ]; then
		# shellcheck disable=SC2086
		$as apt-get -o DPkg::Lock::Timeout=600 update -qq --error-on=any >>"$log" 2>&1 ||
			{ updated=failed; tail -20 "$log" >&2; return 2; }
		updated=1
	fi
	# shellcheck disable=SC2086
	$as apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "$@" >>"$log" 2>&1 ||
		{ tail -20 "$log" >&2; return 2; }
	rm -f "$log"
}

notes=() failed=()
# need FEATURE REQUIRED WHAT-SKIPS PKGS...: one note on the feature.
need() {
	local f=$1 required=$2 skips=$3
	shift 3
	local miss rc=0
	miss=$(missing "$@")
	if [ -z "$miss" ]; then
		notes+=("$f ok")
		return
	fi
	# shellcheck disable=SC2086
	install $miss || rc=$?
	if [ $rc = 0 ]; then
		notes+=("$f: installed $miss")
		return
	fi
	local why="not installed"
	[ $rc = 2 ] && why="apt-get failed"
	if [ "$required" = required ]; then
		notes+=("$f: MISSING $miss")
		failed+=("$f needs: apt-get install $miss ($why)")
	else
		notes+=("$f: missing $miss, $skips will SKIP (apt-get install $miss)")
	fi
}

feature() {
	local sh
	case $1 in
	cc) need cc required "" gcc libc6-dev ;;
	triton)
		sh=$(shared)
		if [ -n "${PERFSCEN_TRITON_DIR:-}" ] || { [ -n "$sh" ] && [ -d "$sh/triton" ]; }; then
			# shellcheck disable=SC2086
			need triton required "" $TRITON_PKGS
		fi
		;;
	torchserve)
		sh=$(shared)
		if [ -n "$sh" ] && [ -d "$sh/torchserve" ]; then
			# shellcheck disable=SC2086
			need torchserve required "" $TORCHSERVE_PKGS
		fi
		;;
	grpcio) need grpcio optional "the Python grpcio test" python3-grpcio ;;
	netns)
		if [ "$(id -u)" = 0 ]; then
			need netns optional "the multi-host tests" iproute2
		else
			notes+=("netns: not root, the multi-host tests will SKIP")
		fi
		;;
	protoc) need protoc optional "the protoc import comparison" protobuf-compiler libprotobuf-dev ;;
	image) need image required "" podman runc debootstrap debian-archive-keyring ca-certificates ;;
	screenshots) need screenshots required "" chromium ;;
	test) for f in cc triton torchserve grpcio netns protoc; do feature "$f"; done ;;
	*) echo "deps: unknown feature $1 (cc, triton, torchserve, grpcio, netns, protoc, image, screenshots, test)" >&2; exit 2 ;;
	esac
}

[ $# -gt 0 ] || set -- test
if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "deps: no dpkg-query: not a Debian system; install the packages scripts/deps.sh lists for: $*" >&2
	exit 0
fi
for f in "$@"; do feature "$f"; done
line=""
for n in "${notes[@]}"; do line="${line:+$line; }$n"; done
echo "deps ($*): ${line:-nothing to check}"
if [ ${#failed[@]} -gt 0 ]; then
	for f in "${failed[@]}"; do echo "deps: $f" >&2; done
	exit 1
fi
