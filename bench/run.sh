#!/usr/bin/env bash
# qkcm vs upstream kube-controller-manager, side by side, in one run. See bench/README.md.
#
#   bench/run.sh [--quick] [bench.py options...]     e.g. --managers qkcm-jvm,upstream --reps 3 --idle 120
#
# Builds what is missing (control-plane binaries, qkcm, the ceiling tool; installs matplotlib with
# pip if absent), then runs bench/bench.py: ceiling, then per repetition and manager (A/B order
# alternating) a fresh kwokctl cluster, the scenarios, the measurements. Results go to
# bench/results/<date>/ (results.md, pods-ready.png, medians.json; raw data under raw/).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
log() { printf '[bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

"$ROOT/hack/install-control-plane.sh" >/dev/null
BIN="$("$ROOT/hack/install-control-plane.sh" --print-dir)"

JAR="${QKCM_JAR:-$ROOT/app/target/quarkus-app/quarkus-run.jar}"
if [[ -z "${QKCM_JAR:-}" ]] && [[ ! -f "$JAR" || -n "$(find "$ROOT/app/src/main" "$ROOT/devui" "$ROOT/pom.xml" "$ROOT/app/pom.xml" -path "$ROOT/devui/*/target" -prune -o -newer "$JAR" -print -quit)" ]]; then
  log "building qkcm (./mvnw package -DskipTests)"
  (cd "$ROOT" && ./mvnw -q -B package -DskipTests)
fi

CEILING="$ROOT/bench/ceiling/ceiling"
if [[ ! -x "$CEILING" || "$ROOT/bench/ceiling/main.go" -nt "$CEILING" ]]; then
  log "building the ceiling client (Go, standard library only)"
  (cd "$ROOT/bench/ceiling" && go build -o ceiling .)
fi

python3 -c 'import requests' 2>/dev/null || { log "pip install requests"; pip install -q requests; }
python3 -c 'import matplotlib' 2>/dev/null || { log "pip install matplotlib"; pip install -q matplotlib || log "no matplotlib: the chart is skipped"; }

K8S_VERSION="v$(basename "$BIN" | cut -d- -f1)"
KWOK_VERSION="$("$BIN/kwokctl" --version 2>/dev/null | awk '{print $3}')"
# (from the jar's manifest: asking the app for --version costs a JVM start, minutes on a loaded machine)
QKCM_VERSION="$(unzip -p "$JAR" META-INF/MANIFEST.MF 2>/dev/null | sed -n 's/^Implementation-Version: *\([^[:space:]]*\).*/\1/p' | head -1)"

# One run at a time on a machine: every run recreates the same kwokctl cluster and binds the same ports.
# (-o: the cluster's processes, which outlive the run, do not inherit the lock)
LOCK="${TMPDIR:-/tmp}/qkcm-bench.lock"
flock -n "$LOCK" true || log "another bench run holds $LOCK; waiting for it"
exec flock -o "$LOCK" python3 "$ROOT/bench/bench.py" --bin-dir "$BIN" --ceiling-bin "$CEILING" \
  --k8s-version "$K8S_VERSION" --kwok-version "$KWOK_VERSION" --qkcm-version "${QKCM_VERSION:-unknown} (commit $(git -C "$(dirname "$JAR")/../.." describe --always --dirty 2>/dev/null))" "$@"
