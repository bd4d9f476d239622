#!/usr/bin/env bash
# Builds Toxiproxy (github.com/Shopify/toxiproxy/v2, a TCP proxy that injects latency, resets and
# stalls through a REST API) from Go modules, for bench/chaos.sh's faulty-network variants:
#
#   ${KUBE_API_TEST_DIR:-~/.kubeapitest}/toxiproxy/<version>/toxiproxy-server
#
# Idempotent (an installed binary of the pinned version is kept). Nothing is downloaded except Go
# modules through the configured Go module proxy (`go list -m -versions github.com/Shopify/toxiproxy/v2`
# lists what it serves).
#
# Usage: hack/install-toxiproxy.sh [--print-path]
set -euo pipefail
VERSION="${TOXIPROXY_VERSION:-v2.5.0}"
DEST="${KUBE_API_TEST_DIR:-$HOME/.kubeapitest}/toxiproxy/$VERSION"
BIN="$DEST/toxiproxy-server"
case "${1:-}" in
  --print-path) echo "$BIN"; exit 0 ;;
  "") ;;
  *) echo "install-toxiproxy: unknown argument: $1" >&2; exit 1 ;;
esac
if [[ -x "$BIN" ]]; then
  echo "[toxiproxy] already installed: $BIN"
  exit 0
fi
command -v go >/dev/null || { echo "install-toxiproxy: the Go toolchain is required" >&2; exit 1; }
STAGE="$(mktemp -d)"
trap 'rm -rf "$STAGE"' EXIT
echo "[toxiproxy] building github.com/Shopify/toxiproxy/v2/cmd/server@$VERSION"
(cd "$STAGE" && CGO_ENABLED=0 GOFLAGS=-buildvcs=false GOBIN="$STAGE" \
  go install -trimpath -ldflags "-s -w" "github.com/Shopify/toxiproxy/v2/cmd/server@$VERSION")
mkdir -p "$DEST"
mv -f "$STAGE/server" "$BIN"
echo "[toxiproxy] installed $BIN"
