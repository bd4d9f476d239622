#!/usr/bin/env bash
# qkcm in shadow mode (--shadow) beside upstream's kube-controller-manager on a local kwok cluster,
# through the benchmark's scenarios at a small size. See bench/shadow.py and bench/README.md.
#
#   bench/shadow.sh [--out DIR] [shadow.py options...]   e.g. --deployments 3 --replicas 3 --rs-replicas 20
#
# Builds what is missing (control-plane binaries, qkcm), then runs bench/shadow.py: a fresh kwokctl cluster
# (~/.kwok-shadow, cluster qkcm-shadow) with upstream's kube-controller-manager as its controller manager and
# qkcm --shadow beside it, both with every default controller; the scenarios; qkcm's /shadow and
# /shadow.html at the end; CPU seconds and RSS of both processes. Results go to DIR (default
# bench/results/<date>-shadow/): shadow.json, shadow.html, metrics.txt, summary.md; raw/ (logs, run.json).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
log() { printf '[shadow %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

"$ROOT/hack/install-control-plane.sh" >/dev/null
BIN="$("$ROOT/hack/install-control-plane.sh" --print-dir)"

JAR="${QKCM_JAR:-$ROOT/app/target/quarkus-app/quarkus-run.jar}"
if [[ -z "${QKCM_JAR:-}" ]] && [[ ! -f "$JAR" || -n "$(find "$ROOT/app/src/main" "$ROOT/pom.xml" "$ROOT/app/pom.xml" -newer "$JAR" -print -quit)" ]]; then
  log "building qkcm (./mvnw package -DskipTests)"
  (cd "$ROOT" && ./mvnw -q -B -ntp package -DskipTests -Dqkcm.control-plane.skip=true)
fi
python3 -c 'import requests' 2>/dev/null || { log "pip install requests"; pip install -q requests; }

OUT="$ROOT/bench/results/$(date -u +%F)-shadow"
ARGS=()
while (($#)); do
  case "$1" in
    --out) OUT="$2"; shift 2 ;;
    --out=*) OUT="${1#--out=}"; shift ;;
    *) ARGS+=("$1"); shift ;;
  esac
done
mkdir -p "$OUT"
# the command, for the results' README
printf 'bench/shadow.sh %s\n' "${ARGS[*]-}" > "$OUT/command.txt"
log "results in $OUT"
exec python3 "$ROOT/bench/shadow.py" --bin-dir "$BIN" --qkcm-jar "$JAR" --out "$OUT" ${ARGS[@]+"${ARGS[@]}"}
