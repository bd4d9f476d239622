#!/usr/bin/env bash
# Chaos run: qkcm and upstream kube-controller-manager under faults (kill -9, failover, API server
# restart, watches cut, etcd compaction / 410 Gone, a faulty network through Toxiproxy), with pods
# created/deleted beyond spec, convergence, takeover and overlapping leaders counted from the API
# server's audit log. See bench/README.md ("Chaos run").
#
#   bench/chaos.sh [--short] [chaos.py options...]   e.g. --managers qkcm-jvm,upstream --qps 100,1000 --kills 6
#   bench/chaos.sh --workload job|daemonset|statefulset ...   the workload variants (issue 38)
#
# Builds what is missing (control-plane binaries, Toxiproxy, qkcm), then runs bench/chaos.py.
# Results go to bench/results/<date>-chaos/ (results.md, summary.json; raw data under raw/).
# Exit status 1 when qkcm made a pod beyond spec, overlapped another leader or did not converge.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
log() { printf '[chaos %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

"$ROOT/hack/install-control-plane.sh" >/dev/null
BIN="$("$ROOT/hack/install-control-plane.sh" --print-dir)"
"$ROOT/hack/install-toxiproxy.sh" >/dev/null
TOXIPROXY="$("$ROOT/hack/install-toxiproxy.sh" --print-path)"

JAR="${QKCM_JAR:-$ROOT/app/target/quarkus-app/quarkus-run.jar}"
if [[ -z "${QKCM_JAR:-}" ]] && [[ ! -f "$JAR" || -n "$(find "$ROOT/app/src/main" "$ROOT/pom.xml" "$ROOT/app/pom.xml" -newer "$JAR" -print -quit)" ]]; then
  log "building qkcm (./mvnw package -DskipTests)"
  (cd "$ROOT" && ./mvnw -q -B package -DskipTests)
fi
python3 -c 'import requests' 2>/dev/null || { log "pip install requests"; pip install -q requests; }

K8S_VERSION="v$(basename "$BIN" | cut -d- -f1)"
QKCM_VERSION="$(git -C "$(dirname "$JAR")/../.." describe --always --dirty 2>/dev/null || echo unknown)"
exec python3 "$ROOT/bench/chaos.py" --bin-dir "$BIN" --toxiproxy "$TOXIPROXY" \
  --versions "Kubernetes $K8S_VERSION (etcd, kube-apiserver, kube-scheduler, upstream kube-controller-manager), Toxiproxy $(basename "$(dirname "$TOXIPROXY")"), qkcm commit $QKCM_VERSION" "$@"
