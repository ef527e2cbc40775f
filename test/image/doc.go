// Package image holds the tests of the container image's scripts
// (scripts/container.sh): which OCI runtime it runs containers with on a
// host where podman's default cannot, and what it says when none can. The
// image itself is built and run by make image and make image-check.
package image
