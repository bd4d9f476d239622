#!/usr/bin/env bash
# Soak: does qkcm's memory stay bounded under churn? (issue 19)
#
#   nice -n 19 bench/soak.sh [--minutes 30] [--pods 1000] [--period 30] [--heap 256m] [--out DIR]
#
# On a kwok cluster of its own (hack/local-cluster.sh --no-qkcm with its own name, work directory,
# kubeconfig and port: qkcm-soak, ~/.kwok-soak, 10467), runs qkcm from this checkout's JVM build with a
# heap limit (-Xmx) and churns pods through the ReplicaSet controller: every --period seconds one
# ReplicaSet is scaled between 0 and --pods (default: 1000 pods created, then 30 s later deleted: 1000
# creations and 1000 deletions a minute; pods created and deleted are counted from the API server's
# apiserver_request_total). Every --period seconds (at the end of each half cycle)
# it samples from /proc: RSS, threads, open sockets and ESTABLISHED TCP connections of the qkcm
# process, and the JVM heap in use from /metrics. At the end churn stops (0 replicas), the cluster
# idles 60 s and a last sample is taken. Results: DIR/samples.csv and DIR/summary.md (default
# bench/results/<date>-soak). This measures memory, not speed: run it niced, without the heavy lock.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MINUTES=30 PODS=1000 PERIOD=30 HEAP=256m OUT="$ROOT/bench/results/$(date -u +%Y-%m-%d)-soak"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --minutes) MINUTES="$2"; shift 2 ;;
    --pods) PODS="$2"; shift 2 ;;
    --period) PERIOD="$2"; shift 2 ;;
    --heap) HEAP="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    *) echo "usage: bench/soak.sh [--minutes N] [--pods N] [--period S] [--heap SIZE] [--out DIR]" >&2; exit 1 ;;
  esac
done
log() { printf '[soak %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

export QKCM_CLUSTER_NAME=qkcm-soak KWOK_WORKDIR="$HOME/.kwok-soak" QKCM_SECURE_PORT=10467
export QKCM_KUBECONFIG="$KWOK_WORKDIR/kubeconfig" QKCM_NODES="${QKCM_NODES:-12}"
CLUSTER_DIR="$KWOK_WORKDIR/clusters/$QKCM_CLUSTER_NAME"
BIN="$("$ROOT/hack/install-control-plane.sh" --print-dir)"
KUBECTL=("$BIN/kubectl" --kubeconfig "$QKCM_KUBECONFIG")
mkdir -p "$OUT"
QKCM_LOG="$OUT/qkcm.log"

JAR="$ROOT/app/target/quarkus-app/quarkus-run.jar"
if [[ ! -f "$JAR" || -n "$(find "$ROOT/app/src/main" "$ROOT/pom.xml" "$ROOT/app/pom.xml" -newer "$JAR" -print -quit)" ]]; then
  log "building qkcm (./mvnw package -DskipTests)"
  (cd "$ROOT" && ./mvnw -q -B -o package -DskipTests)
fi

QKCM_PID=""
cleanup() {
  if [[ -n "$QKCM_PID" ]] && kill -0 "$QKCM_PID" 2>/dev/null; then
    kill "$QKCM_PID"; wait "$QKCM_PID" 2>/dev/null || true
  fi
  "$ROOT/hack/local-cluster.sh" down >/dev/null 2>&1 || true
}
trap cleanup EXIT

log "cluster $QKCM_CLUSTER_NAME ($QKCM_NODES kwok nodes) in $KWOK_WORKDIR"
"$ROOT/hack/local-cluster.sh" up --no-qkcm 2>"$OUT/local-cluster.log"
FLAGS=()
while read -r d; do FLAGS+=("--${d#-Dqkcm.}"); done <"$CLUSTER_DIR/quarkus-dev.args"
FLAGS+=(--leader-elect=false --kube-api-qps=100 --kube-api-burst=200)
JAVA_OPTS="$(QKCM_PRINT_JAVA_OPTS=1 "$ROOT/bin/qkcm") -Xmx$HEAP"
log "qkcm: JVM options $JAVA_OPTS; flags ${FLAGS[*]}"
QKCM_JAVA_OPTS="$JAVA_OPTS" "$ROOT/bin/qkcm" "${FLAGS[@]}" >"$QKCM_LOG" 2>&1 &
QKCM_PID=$!
for _ in $(seq 1 120); do
  [[ "$(curl -sk --max-time 2 "https://127.0.0.1:$QKCM_SECURE_PORT/healthz" 2>/dev/null)" == ok ]] && break
  kill -0 "$QKCM_PID" || { log "qkcm exited"; tail -20 "$QKCM_LOG" >&2; exit 1; }
  sleep 1
done
# bin/qkcm execs java: the pid is the JVM's
log "qkcm running, pid $QKCM_PID"

sample() { # phase elapsed_s replicas
  local rss threads sockets estab heap
  rss=$(awk '/^VmRSS/{print $2}' "/proc/$QKCM_PID/status")
  threads=$(awk '/^Threads/{print $2}' "/proc/$QKCM_PID/status")
  sockets=$(find "/proc/$QKCM_PID/fd" -lname 'socket:*' 2>/dev/null | wc -l)
  estab=$(ss -tnpH state established 2>/dev/null | grep -c "pid=$QKCM_PID," || true)
  curl -sk --max-time 20 "https://127.0.0.1:$QKCM_SECURE_PORT/metrics" >"$OUT/.metrics" 2>/dev/null || true
  heap=$(awk '/^jvm_memory_used_bytes\{.*area="heap"/{s+=$NF} END{printf "%d", s/1048576}' "$OUT/.metrics")
  observed=$("${KUBECTL[@]}" -n soak get rs churn -o jsonpath='{.status.replicas}' 2>/dev/null || echo 0)
  echo "$1,$2,$3,${observed:-0},$((rss / 1024)),$threads,$sockets,$estab,$heap,$(pod_requests POST),$(pod_requests DELETE)" >>"$OUT/samples.csv"
}
pod_requests() { # the API server's count of pod requests with this verb (all clients, all codes)
  "${KUBECTL[@]}" get --raw /metrics 2>/dev/null \
    | awk -v verb="$1" '/^apiserver_request_total\{/ && /resource="pods"/ && /subresource=""/ && $0 ~ "verb=\"" verb "\"" {s+=$NF} END{printf "%d", s}'
}
echo "phase,elapsed_s,replicas,observed_replicas,rss_mib,threads,sockets,tcp_established,heap_used_mib,pod_posts,pod_deletes" >"$OUT/samples.csv"

"${KUBECTL[@]}" create namespace soak >/dev/null
"${KUBECTL[@]}" -n soak apply -f - >/dev/null <<EOF
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: churn}
spec:
  replicas: 0
  selector: {matchLabels: {app: churn}}
  template:
    metadata: {labels: {app: churn}}
    spec:
      containers: [{name: c, image: registry.k8s.io/pause:3.10}]
EOF
sleep 10
echo "start: $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores, commit $(git -C "$ROOT" describe --always --dirty)" >"$OUT/machine.txt"
sample start 0 0
START=$(date +%s)
END=$((START + MINUTES * 60))
replicas=0
while [[ $(date +%s) -lt $END ]]; do
  if [[ $replicas -eq 0 ]]; then replicas=$PODS; else replicas=0; fi
  "${KUBECTL[@]}" -n soak scale rs churn --replicas="$replicas" >/dev/null
  sleep "$PERIOD"
  kill -0 "$QKCM_PID" || { log "qkcm exited"; exit 1; }
  sample churn $(( $(date +%s) - START )) "$replicas"
done
"${KUBECTL[@]}" -n soak scale rs churn --replicas=0 >/dev/null
log "churn over; idling 60 s"
sleep 60
sample idle-end $(( $(date +%s) - START )) 0
echo "end: $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/machine.txt"
rm -f "$OUT/.metrics"
"${KUBECTL[@]}" -n soak get rs churn -o jsonpath='{.status.replicas}' >"$OUT/final-replicas.txt" || true

python3 - "$OUT" "$MINUTES" "$PODS" "$PERIOD" "$HEAP" "$JAVA_OPTS" <<'PY'
import csv, sys, statistics as st
out, minutes, pods, period, heap, opts = sys.argv[1:7]
rows = list(csv.DictReader(open(f"{out}/samples.csv")))
churn = [r for r in rows if r["phase"] == "churn"]
def m(rs, k): return st.mean(float(r[k]) for r in rs) if rs else float("nan")
# compare like with like: samples taken at the same point of the cycle (after a scale-down to 0)
down = [r for r in churn if r["replicas"] == "0"]
first, last = down[2:7], down[-5:]   # skip the first minute (caches and JIT warming up)
idle = [r for r in rows if r["phase"] == "idle-end"]
start = [r for r in rows if r["phase"] == "start"]
lines = [f"# Soak: {minutes} min of churn ({pods} pods created and deleted every {2*int(period)} s), -Xmx{heap}", "",
         "| figure | first 5 samples after 1 min (pods 0) | last 5 samples (pods 0) | change |", "|---|---|---|---|"]
for k, name in [("rss_mib", "RSS (MiB)"), ("heap_used_mib", "heap in use (MiB)"), ("threads", "threads"),
                ("sockets", "open sockets"), ("tcp_established", "TCP connections ESTABLISHED")]:
    a, b = m(first, k), m(last, k)
    lines.append(f"| {name} | {a:.1f} | {b:.1f} | {100*(b-a)/a if a else float('nan'):+.1f}% |")
posts = int(rows[-1]["pod_posts"]) - int(rows[0]["pod_posts"]); dels = int(rows[-1]["pod_deletes"]) - int(rows[0]["pod_deletes"])
lines += ["", f"- pods created / deleted during the run (API server's apiserver_request_total, POST / DELETE on pods): {posts} / {dels}"]
lines += ["", f"- before churn (idle, RS at 0): RSS {start[0]['rss_mib']} MiB, threads {start[0]['threads']}, sockets {start[0]['sockets']}" if start else "",
          f"- after churn + 60 s idle: RSS {idle[0]['rss_mib']} MiB, threads {idle[0]['threads']}, sockets {idle[0]['sockets']}, heap {idle[0]['heap_used_mib']} MiB" if idle else "",
          f"- RSS max during churn: {max(int(r['rss_mib']) for r in churn)} MiB; threads max {max(int(r['threads']) for r in churn)}" if churn else "",
          f"- JVM options: `{opts}`", f"- samples: samples.csv ({len(rows)} rows)"]
open(f"{out}/summary.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
