#!/usr/bin/env bash
# Builds the pinned Kubernetes control plane from Go modules and installs it where kube-api-test
# (and qkcm's local cluster and benchmark scripts) look for it:
#
#   ${KUBE_API_TEST_DIR:-~/.kubeapitest}/k8s/<version>-linux-amd64/
#     kube-apiserver kube-controller-manager kube-scheduler kubectl   (k8s.io/kubernetes, hack/control-plane)
#     etcd                                                             (go.etcd.io/etcd/server/v3, hack/etcd)
#     kwok kwokctl                                                     (sigs.k8s.io/kwok)
#
# kube-controller-manager is upstream's, built only as the reference that comparison tests and the
# benchmark measure qkcm against.
#
# Idempotent: a second run with the same pins finds the stamp and does nothing. Nothing is
# downloaded except Go modules through the configured Go module proxy.
#
# Usage: hack/install-control-plane.sh [--print-dir] [--force]
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
KWOK_VERSION="v0.7.0"
MIN_GO_MINOR=24

# the required version of module $2 in go.mod $1, whether written `require m v` or inside a require block
required() { awk -v m="$2" '($1=="require" && $2==m) {print $3; exit} ($1==m && $2 ~ /^v/) {print $2; exit}' "$1"; }
k8s_version() { required "$HERE/control-plane/go.mod" k8s.io/kubernetes; }
etcd_version() { required "$HERE/etcd/go.mod" go.etcd.io/etcd/server/v3; }

K8S_VERSION="$(k8s_version)"
ETCD_VERSION="$(etcd_version)"
[[ -n "$K8S_VERSION" && -n "$ETCD_VERSION" ]] || { echo "install-control-plane: cannot read pinned versions from hack/*/go.mod" >&2; exit 1; }

ROOT_DIR="${KUBE_API_TEST_DIR:-$HOME/.kubeapitest}"
DEST="$ROOT_DIR/k8s/${K8S_VERSION#v}-linux-amd64"
BINARIES=(kube-apiserver kube-controller-manager kube-scheduler kubectl etcd kwok kwokctl)

force=false
for arg in "$@"; do
  case "$arg" in
    --print-dir) echo "$DEST"; exit 0 ;;
    --force) force=true ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install-control-plane: unknown argument: $arg" >&2; exit 1 ;;
  esac
done

log() { printf '[control-plane %s] %s\n' "$(date +%H:%M:%S)" "$*"; }

# The stamp names every input of the build: a change of pins, module sums or this script rebuilds.
stamp_content() {
  {
    echo "kubernetes=$K8S_VERSION etcd=$ETCD_VERSION kwok=$KWOK_VERSION"
    cat "$HERE/control-plane/go.mod" "$HERE/control-plane/go.sum" "$HERE/etcd/go.mod" "$HERE/etcd/go.sum" "$0"
  } | sha256sum | cut -d' ' -f1
}

installed() {
  [[ -f "$DEST/.qkcm-stamp" && "$(cat "$DEST/.qkcm-stamp")" == "$(stamp_content)" ]] || return 1
  local b
  for b in "${BINARIES[@]}"; do [[ -x "$DEST/$b" ]] || return 1; done
}

# The extra real programs some tests need, each built by its own script (idempotent, quick when done).
extras() {
  "$HERE/install-provisioner.sh"
  "$HERE/install-metrics-server.sh"
}

if ! $force && installed; then
  log "already installed, nothing to do: $DEST (kubernetes $K8S_VERSION, etcd $ETCD_VERSION, kwok $KWOK_VERSION)"
  extras
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  echo "install-control-plane: the Go toolchain (go 1.$MIN_GO_MINOR or newer) is required but 'go' is not on PATH" >&2
  exit 1
fi
go_minor="$(go env GOVERSION | sed -E 's/^go1\.([0-9]+).*/\1/')"
if [[ ! "$go_minor" =~ ^[0-9]+$ ]] || (( go_minor < MIN_GO_MINOR )); then
  echo "install-control-plane: go 1.$MIN_GO_MINOR or newer is required, found $(go env GOVERSION)" >&2
  exit 1
fi

export CGO_ENABLED=0 GOFLAGS="-buildvcs=false -mod=readonly" GOTOOLCHAIN=local
STAGE="$(mktemp -d "$ROOT_DIR/.stage.XXXXXX" 2>/dev/null || { mkdir -p "$ROOT_DIR" && mktemp -d "$ROOT_DIR/.stage.XXXXXX"; })"
trap 'rm -rf "$STAGE"' EXIT

# go build -v names each package as it is compiled; print a line every 100 so a long first build
# shows progress without flooding the log.
progress() {
  local what="$1" n=0 line
  while IFS= read -r line; do
    # compiler diagnostics ("file.go:12:3: ..."), package headers ("# pkg") and go tool messages pass through
    if [[ "$line" == *.go:* || "$line" == "#"* || "$line" == "go: "* || "$line" == *" "* ]]; then echo "$line"; continue; fi
    n=$((n + 1))
    if (( n % 100 == 0 )); then log "$what: $n packages compiled"; fi
  done
  log "$what: $n packages compiled"
}

run_build() {
  local what="$1"; shift
  local start=$SECONDS
  log "building $what"
  # pipefail carries go's exit status through the progress filter
  if ! "$@" 2>&1 | progress "$what"; then
    echo "install-control-plane: building $what failed (see the compiler output above)" >&2
    exit 1
  fi
  log "built $what in $((SECONDS - start))s"
}

build_date="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
minor="$(echo "$K8S_VERSION" | cut -d. -f2)"
k8s_ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  k8s_ldflags+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  k8s_ldflags+=" -X $pkg.gitTreeState=archive -X $pkg.buildDate=$build_date"
done

log "installing kubernetes $K8S_VERSION, etcd $ETCD_VERSION, kwok $KWOK_VERSION into $DEST"
log "the first build compiles a few thousand packages: expect 15-30 minutes on 2 cores"

(cd "$HERE/control-plane" && run_build "kubernetes $K8S_VERSION (kube-apiserver, kube-controller-manager, kube-scheduler, kubectl)" \
  go build -v -trimpath -ldflags "$k8s_ldflags" -o "$STAGE/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl)

(cd "$HERE/etcd" && run_build "etcd $ETCD_VERSION" \
  go build -v -trimpath -ldflags "-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=$ETCD_VERSION" \
    -o "$STAGE/etcd" go.etcd.io/etcd/server/v3)

# kwok's own go.mod has no replace directives, so `go install module@version` builds it as released.
kwok_ldflags="-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=$KWOK_VERSION -X sigs.k8s.io/kwok/pkg/consts.KubeVersion=$K8S_VERSION"
(cd "$STAGE" && GOFLAGS=-buildvcs=false GOBIN="$STAGE" run_build "kwok $KWOK_VERSION (kwok, kwokctl)" \
  go install -v -trimpath -ldflags "$kwok_ldflags" \
    "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION" "sigs.k8s.io/kwok/cmd/kwokctl@$KWOK_VERSION")

for b in "${BINARIES[@]}"; do
  [[ -x "$STAGE/$b" ]] || { echo "install-control-plane: $b was not produced by the build" >&2; exit 1; }
done

mkdir -p "$DEST"
for b in "${BINARIES[@]}"; do mv -f "$STAGE/$b" "$DEST/$b"; done
stamp_content > "$DEST/.qkcm-stamp"

log "installed into $DEST:"
"$DEST/kube-apiserver" --version
"$DEST/kube-controller-manager" --version
"$DEST/kube-scheduler" --version
"$DEST/kubectl" version --client 2>/dev/null | awk "NR==1"
"$DEST/etcd" --version | awk "NR==1"
"$DEST/kwok" --version
"$DEST/kwokctl" --version
extras
