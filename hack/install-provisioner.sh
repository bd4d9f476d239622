#!/usr/bin/env bash
# Builds qkcm's test external provisioner (hack/provisioner: a hostPath provisioner on
# sigs.k8s.io/sig-storage-lib-external-provisioner/v13) from Go modules, for the PV binder's tests of
# the hand-off to external provisioners:
#
#   ${KUBE_API_TEST_DIR:-~/.kubeapitest}/provisioner/<version>/provisioner
#
# <version> is the library's pinned version in hack/provisioner/go.mod plus a hash of the sources, so
# a changed provisioner is rebuilt. Idempotent. Nothing is downloaded except Go modules through the
# configured Go module proxy.
#
# Usage: hack/install-provisioner.sh [--print-path]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SRC="$HERE/provisioner"
LIB_VERSION="$(awk '$1=="sigs.k8s.io/sig-storage-lib-external-provisioner/v13" {print $2; exit}' "$SRC/go.mod")"
[[ -n "$LIB_VERSION" ]] || { echo "install-provisioner: cannot read the library's version from $SRC/go.mod" >&2; exit 1; }
SOURCES_HASH="$(cat "$SRC/go.mod" "$SRC/go.sum" "$SRC/main.go" | sha256sum | cut -c1-12)"
VERSION="$LIB_VERSION-$SOURCES_HASH"
DEST="${KUBE_API_TEST_DIR:-$HOME/.kubeapitest}/provisioner/$VERSION"
BIN="$DEST/provisioner"
case "${1:-}" in
  --print-path) echo "$BIN"; exit 0 ;;
  "") ;;
  *) echo "install-provisioner: unknown argument: $1" >&2; exit 1 ;;
esac
if [[ -x "$BIN" ]]; then
  echo "[provisioner] already installed: $BIN"
  exit 0
fi
command -v go >/dev/null || { echo "install-provisioner: the Go toolchain is required" >&2; exit 1; }
STAGE="$(mktemp -d)"
trap 'rm -rf "$STAGE"' EXIT
echo "[provisioner] building hack/provisioner (sig-storage-lib-external-provisioner $LIB_VERSION)"
(cd "$SRC" && CGO_ENABLED=0 GOFLAGS=-buildvcs=false go build -trimpath -ldflags "-s -w" -o "$STAGE/provisioner" .)
mkdir -p "$DEST"
mv -f "$STAGE/provisioner" "$BIN"
echo "[provisioner] installed $BIN"
