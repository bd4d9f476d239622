#!/usr/bin/env bash
# Builds metrics-server (sigs.k8s.io/metrics-server, the metrics.k8s.io/v1beta1 API that
# horizontal-pod-autoscaler-controller reads pod CPU and memory from) from Go modules, pinned by the
# module hack/metrics-server/ (its go.mod's tool directive), into
#
#   ${KUBE_API_TEST_DIR:-~/.kubeapitest}/metrics-server/<version>/metrics-server
#
# Idempotent (an installed binary of the pinned version is kept). Nothing is downloaded except Go
# modules through the configured Go module proxy.
#
# Usage: hack/install-metrics-server.sh [--print-path]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
MODULE="$HERE/metrics-server"
VERSION="$(awk '$1 == "sigs.k8s.io/metrics-server" { print $2; exit }' "$MODULE/go.mod")"
[[ -n "$VERSION" ]] || { echo "install-metrics-server: no sigs.k8s.io/metrics-server requirement in $MODULE/go.mod" >&2; exit 1; }
DEST="${KUBE_API_TEST_DIR:-$HOME/.kubeapitest}/metrics-server/$VERSION"
BIN="$DEST/metrics-server"
case "${1:-}" in
  --print-path) echo "$BIN"; exit 0 ;;
  "") ;;
  *) echo "install-metrics-server: unknown argument: $1" >&2; exit 1 ;;
esac
if [[ -x "$BIN" ]]; then
  echo "[metrics-server] already installed: $BIN"
  exit 0
fi
command -v go >/dev/null || { echo "install-metrics-server: the Go toolchain is required" >&2; exit 1; }
STAGE="$(mktemp -d)"
trap 'rm -rf "$STAGE"' EXIT
echo "[metrics-server] building sigs.k8s.io/metrics-server/cmd/metrics-server@$VERSION"
(cd "$MODULE" && CGO_ENABLED=0 GOFLAGS=-buildvcs=false \
  go build -trimpath -ldflags "-s -w" -o "$STAGE/metrics-server" sigs.k8s.io/metrics-server/cmd/metrics-server)
mkdir -p "$DEST"
mv -f "$STAGE/metrics-server" "$BIN"
echo "[metrics-server] installed $BIN"
