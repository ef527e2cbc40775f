#!/usr/bin/env bash
# The container image: build it, and check it the way a user runs it.
#
#   scripts/container.sh base    the Debian 12 base image, made with debootstrap
#                                (no registry needed), as $IMAGE_BASE
#   scripts/container.sh build   base when missing, then the image $IMAGE from
#                                Containerfile with bin/perfscen (make image)
#   scripts/container.sh flags [IMAGE]  the podman run flags this host needs (and
#                                which OCI runtime they use), found by trial runs
#   scripts/container.sh check   in containers: perfscen version, the quickstart
#                                on the embedded server, and a distributed run:
#                                perfscen serve, a coordinator and two agents,
#                                each its own container on one podman network,
#                                ending with one verdict (make image-check)
#
# Settings: IMAGE (perfscen:$VERSION), IMAGE_BASE (localhost/perfscen-base:bookworm),
# VERSION (git describe, as make build stamps it), DEBIAN_MIRROR
# (https://deb.debian.org/debian), DEBIAN_KEYRING
# (/usr/share/keyrings/debian-archive-keyring.gpg), PODMAN (podman),
# PODMAN_RUN_FLAGS (flags for every container; found by trial runs when
# unset, see run_flags).
# Needs, on Debian: podman; runc where podman's default runtime (crun)
# cannot start a container (a host without CAP_SYS_RESOURCE, or with hybrid
# cgroups); and, for the base, debootstrap and debian-archive-keyring, run
# as root. docs/distributed.md (From containers) lists them.
set -euo pipefail
cd "$(dirname "$0")/.."

PODMAN=${PODMAN:-podman}
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
IMAGE=${IMAGE:-perfscen:$VERSION}
IMAGE_BASE=${IMAGE_BASE:-localhost/perfscen-base:bookworm}
DEBIAN_MIRROR=${DEBIAN_MIRROR:-https://deb.debian.org/debian}
DEBIAN_KEYRING=${DEBIAN_KEYRING:-/usr/share/keyrings/debian-archive-keyring.gpg}

say() { printf 'container: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

command -v "$PODMAN" >/dev/null || die "no $PODMAN on PATH (Debian: apt-get install podman runc)"

have_image() { "$PODMAN" image exists "$1"; }

base() {
	command -v debootstrap >/dev/null || die "no debootstrap on PATH (Debian: apt-get install debootstrap)"
	[ "$(id -u)" = 0 ] || die "debootstrap needs root"
	# Every package is checked against Debian's archive keys: the Release
	# file's signature, then each package's hash in it. Without the keyring
	# debootstrap would go on unchecked, so it is required.
	[ -s "$DEBIAN_KEYRING" ] ||
		die "no Debian archive keyring at $DEBIAN_KEYRING, which the base's packages are checked against (Debian: apt-get install debian-archive-keyring)"
	case $DEBIAN_MIRROR in
	https://*) [ -s /etc/ssl/certs/ca-certificates.crt ] ||
		die "$DEBIAN_MIRROR is https and this host has no CA certificates (Debian: apt-get install ca-certificates; or DEBIAN_MIRROR=http://deb.debian.org/debian, still checked against the keyring)" ;;
	esac
	local root
	root=$(mktemp -d /tmp/perfscen-base.XXXXXX)
	say "debootstrap bookworm (minbase, ca-certificates) from $DEBIAN_MIRROR, checked against $DEBIAN_KEYRING"
	debootstrap --variant=minbase --include=ca-certificates --keyring="$DEBIAN_KEYRING" --force-check-gpg \
		bookworm "$root" "$DEBIAN_MIRROR" >"$root.log" 2>&1 ||
		{ tail -20 "$root.log" >&2; die "debootstrap failed (log: $root.log)"; }
	grep -m1 'Valid Release signature' "$root.log" | sed 's/^I: /container: /' >&2 || true
	rm -f "$root.log"
	# What a container never uses: package lists, caches, documentation.
	rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb \
		"$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/*
	tar -C "$root" --numeric-owner -c . |
		"$PODMAN" import --change 'CMD ["/bin/bash"]' --message "debootstrap --variant=minbase bookworm" - "$IMAGE_BASE" >/dev/null
	rm -rf "$root"
	say "base image $IMAGE_BASE"
}

# run_flags finds flags under which this host can start a container from
# image $1, prints them on stdout and says on stderr which runtime they
# use. A host without CAP_SYS_RESOURCE (a CI runner that is itself a
# container) cannot give a container podman's default limits (1048576 open
# files); crun refuses hybrid cgroup hierarchies, with or without limits;
# runc runs there with the calling shell's own limits, but Debian's podman
# does not install it when crun is installed. So: the default runtime, then
# the default runtime with the shell's limits, then runc with them; and
# where none starts, each one's error and what to install.
run_flags() {
	if [ -n "${PODMAN_RUN_FLAGS+x}" ]; then
		say "container flags from PODMAN_RUN_FLAGS: ${PODMAN_RUN_FLAGS:-none}"
		echo "$PODMAN_RUN_FLAGS"
		return
	fi
	local nofile nproc limits default
	nofile=$(ulimit -Hn)
	nproc=$(ulimit -Hu)
	[ "$nproc" = unlimited ] && nproc=32768
	[ "$nproc" -gt 32768 ] && nproc=32768
	limits="--ulimit nofile=$nofile:$nofile --ulimit nproc=$nproc:$nproc"
	default=$("$PODMAN" info --format '{{.Host.OCIRuntime.Name}}' 2>/dev/null) || default=""
	[ -n "$default" ] || default="podman's default runtime"
	local flags=("" "$limits") names=("$default" "$default with this shell's limits")
	if [ "$default" != runc ]; then
		flags+=("--runtime runc $limits")
		names+=("runc with this shell's limits")
	fi
	local i err line why=() runc_missing=""
	for i in "${!flags[@]}"; do
		# shellcheck disable=SC2086
		if err=$("$PODMAN" run --rm ${flags[$i]} --entrypoint /bin/true "$1" 2>&1 >/dev/null); then
			if [ "$i" = 0 ]; then
				say "OCI runtime: $default"
			else
				say "OCI runtime: ${names[$i]} ($(echo ${flags[$i]})), since ${why[*]}"
			fi
			echo "${flags[$i]}"
			return
		fi
		line=$(printf '%s\n' "$err" | grep -v '^time=' | grep . | tail -1)
		case $line in *'OCI runtime "runc" not found'*) runc_missing=1 ;; esac
		why+=("${names[$i]} cannot start a container here ($line)")
	done
	say "no container starts on this host:"
	for i in "${why[@]}"; do say "  $i"; done
	if [ -n "$runc_missing" ]; then
		say "runc is not installed; it runs containers where $default cannot set the limits or the cgroups: apt-get install runc"
	fi
	die "no OCI runtime podman can use here (PODMAN_RUN_FLAGS sets the flags outright)"
}

build() {
	have_image "$IMAGE_BASE" || base
	local b got
	for b in bin/perfscen bin/image/perfscen; do
		[ -x "$b" ] || die "no $b: run make image (make build and make image-bin)"
		got=$("$b" version | awk '{print $2}')
		[ "$got" = "$VERSION" ] || die "$b is $got, not $VERSION: run make image"
	done
	local flags
	flags=$(run_flags "$IMAGE_BASE")
	say "podman build $IMAGE (base $IMAGE_BASE${flags:+; $flags})"
	# podman build takes --runtime before the subcommand's other flags.
	local runtime="" ulimits=()
	for f in $flags; do
		case $f in
		--runtime) runtime=next ;;
		--ulimit) ;;
		*) if [ "$runtime" = next ]; then runtime=$f; else ulimits+=(--ulimit "$f"); fi ;;
		esac
	done
	"$PODMAN" ${runtime:+--runtime "$runtime"} build --file Containerfile --tag "$IMAGE" \
		"${ulimits[@]}" \
		--build-arg BASE="$IMAGE_BASE" \
		--build-arg VERSION="$VERSION" \
		--build-arg REVISION="$(git rev-parse HEAD 2>/dev/null || echo unknown)" \
		--build-arg CREATED="$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
		. >&2
	local size v
	size=$("$PODMAN" image inspect --format '{{.Size}}' "$IMAGE")
	# shellcheck disable=SC2086
	v=$("$PODMAN" run --rm $flags "$IMAGE" version) || die "the image built, but perfscen does not start in it"
	say "built $IMAGE: $((size / 1000000)) MB ($size bytes); in it: $v"
}

check() {
	have_image "$IMAGE" || die "no image $IMAGE: run make image"
	# Globals, not locals: the EXIT trap runs after check returns.
	flags=$(run_flags "$IMAGE")
	tag=$$
	net=perfscen-check-$tag
	work=$(mktemp -d /tmp/perfscen-check.XXXXXX)
	# shellcheck disable=SC2317
	cleanup() {
		"$PODMAN" rm -f -t 0 "psc-server-$tag" "psc-coord-$tag" "psc-agent0-$tag" "psc-agent1-$tag" >/dev/null 2>&1 || true
		"$PODMAN" network rm -f "$net" >/dev/null 2>&1 || true
		rm -rf "$work"
	}
	trap cleanup EXIT
	# shellcheck disable=SC2086
	run() { "$PODMAN" run $flags "$@"; }

	say "1. perfscen version in $IMAGE"
	local v
	v=$(run --rm "$IMAGE" version)
	echo "$v"
	case $v in "perfscen $VERSION "*) ;; *) die "the image's perfscen is not $VERSION: $v" ;; esac
	[ "$("$PODMAN" image inspect --format '{{index .Config.Labels "org.opencontainers.image.version"}}' "$IMAGE")" = "$VERSION" ] ||
		die "the image's version label is not $VERSION"
	[ "$("$PODMAN" image inspect --format '{{.Config.User}}' "$IMAGE")" = 10001:10001 ] || die "the image does not run as user 10001"

	say "2. the quickstart on the embedded server, in a container"
	local rc=0
	run --rm "$IMAGE" run --progress never /usr/share/perfscen/scenarios/quickstart.yaml || rc=$?
	say "quickstart exit $rc"
	case $rc in
	0) ;;
	4) say "exit 4 is 'inconclusive': a busy host; the image ran the scenario" ;;
	*) die "the quickstart exited $rc in the container" ;;
	esac

	say "3. a distributed run: perfscen serve, a coordinator, two agents, four containers"
	"$PODMAN" network create "$net" >/dev/null
	cat >"$work/load.yaml" <<'EOF'
version: 1
name: containers
server: {url: "psc-server:8000", protocol: http}
models: [{name: simple}]
load: {concurrency: 4}
measurement: {window: 1s, stability: 30%, max_trials: 10, trials: 3}
thresholds:
  - errors == 0
  - throughput >= 50/s
EOF
	sed -i "s/psc-server/psc-server-$tag/" "$work/load.yaml"
	mkdir "$work/results"
	local token
	token=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
	# A 10 ms service time, as a model busy on an accelerator: one instance,
	# so about 100 infer/s whatever the concurrency, paced by the model and
	# not by the CPUs, and its windows settle within ±30% on a busy 2-core
	# host. The bare simple model answers as fast as the CPUs allow, its
	# windows swing with every neighbour, and the run ended "unstable",
	# exit 3.
	run -d --name "psc-server-$tag" --network "$net" "$IMAGE" serve --host 0.0.0.0 --models simple \
		--model-param simple.added_latency=10ms >/dev/null
	# Coordinator and agents as the manifests of perfscen k8s run them: a
	# read-only root, no capabilities, no privilege escalation.
	local locked=(--read-only --cap-drop ALL --security-opt no-new-privileges)
	run -d --name "psc-coord-$tag" --network "$net" "${locked[@]}" -e PERFSCEN_AGENT_TOKEN="$token" \
		-v "$work/load.yaml:/etc/perfscen/load.yaml:ro" -v "$work/results:/results:U" \
		"$IMAGE" run --progress never --agents 2 --listen 0.0.0.0:7700 --agent-wait 2m --out-dir /results /etc/perfscen/load.yaml >/dev/null
	for i in 0 1; do
		run -d --name "psc-agent$i-$tag" --network "$net" "${locked[@]}" -e PERFSCEN_AGENT_TOKEN="$token" \
			-v "$work/load.yaml:/etc/perfscen/load.yaml:ro" \
			"$IMAGE" agent --coordinator "psc-coord-$tag:7700" --index "$i" --join-timeout 2m /etc/perfscen/load.yaml >/dev/null
	done
	local coord a0 a1
	coord=$("$PODMAN" wait "psc-coord-$tag")
	a0=$("$PODMAN" wait "psc-agent0-$tag")
	a1=$("$PODMAN" wait "psc-agent1-$tag")
	"$PODMAN" logs "psc-coord-$tag"
	say "coordinator exit $coord, agents exit $a0 and $a1"
	local out
	out=$(find "$work/results" -name '*.json' | head -1)
	[ -n "$out" ] || die "the coordinator wrote no result file"
	if command -v jq >/dev/null; then
		jq -r '"result file: outcome \(.verdict.outcome), exit \(.verdict.exit_code), \(.verdict.checks | length) checks"' "$out" >&2
	fi
	[ "$coord" = 0 ] || die "the distributed run exited $coord"
	if [ "$a0" != 0 ] || [ "$a1" != 0 ]; then die "an agent exited nonzero ($a0, $a1)"; fi
	say "one verdict: exit $coord from the coordinator, $out"

	say "4. perfscen k8s names this image by default"
	local img
	img=$(bin/perfscen k8s --agents 2 "$work/load.yaml" 2>/dev/null | awk '$1 == "image:" {print $2; exit}')
	# podman keeps perfscen:V as localhost/perfscen:V, the name perfscen k8s writes
	[ "$img" = "$IMAGE" ] || [ "$img" = "localhost/$IMAGE" ] || die "perfscen k8s defaults to image $img, not $IMAGE"
	say "perfscen k8s: image $img"
}

case ${1:-} in
base) base ;;
build) build ;;
check) check ;;
flags) run_flags "${2:-$IMAGE_BASE}" ;;
*) die "usage: $0 base|build|check|flags [IMAGE]" ;;
esac
