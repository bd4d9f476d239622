#!/usr/bin/env bash
# Writes qkcm's AOT cache (JEP 483/514/515, JDK 25+): app/target/quarkus-app/qkcm.aot, which bin/qkcm
# then uses (-XX:AOTCache=...) whenever it runs this build on a JDK 25+.
#
# The cache holds the classes a training run loaded and linked (all on the JVM's application class path:
# the JVM build's flat layout, application.properties)
# and the method profiles it gathered, so a later start skips most class loading and linking. The
# training run is qkcm itself, with bin/qkcm's JVM options, against a throw-away kwok cluster
# (hack/local-cluster.sh --no-qkcm: cluster qkcm-aot in ~/.kwok-aot, qkcm on port 10557), with every
# controller on, while a small workload runs: a Deployment scaled up, rolled out, scaled down and
# deleted, a ReplicaSet, a Job. At SIGTERM the JVM writes the cache (tens of MiB, ~10 s).
#
# The cache is valid only for the same JDK build, the same JVM options that matter (GC, compact
# headers, --enable-native-access: the JVM rejects a cache dumped with other module options) and the
# same jar: rebuild it after each ./mvnw package (the JVM ignores a stale cache with a warning, and
# starts as without it). The training takes bin/qkcm's own options, so the two always agree.
#
#   hack/aot-train.sh            # needs a JDK 25+ (bin/qkcm's choice, or JAVA=...)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
log() { printf '[aot-train %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

JAR="$ROOT/app/target/quarkus-app/quarkus-run.jar"
CACHE="$ROOT/app/target/quarkus-app/qkcm.aot"
[[ -f "$JAR" ]] || { echo "aot-train: no build; run ./mvnw package -DskipTests first" >&2; exit 1; }
JAVA="$(QKCM_PRINT_JAVA=1 "$ROOT/bin/qkcm")"
MAJOR="$("$JAVA" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = \([0-9]*\).*/\1/p')"
if (( ${MAJOR:-0} < 25 )); then
  echo "aot-train: $JAVA is Java ${MAJOR:-?}; the AOT cache needs JDK 25+ (set JAVA=...)" >&2
  exit 1
fi
# bin/qkcm's options, without the cache being replaced
OPTS="$(QKCM_PRINT_JAVA_OPTS=1 "$ROOT/bin/qkcm" | sed 's/ *-XX:AOTCache=[^ ]*//')"

export KWOK_WORKDIR="$HOME/.kwok-aot" QKCM_CLUSTER_NAME=qkcm-aot QKCM_NODES=3
export QKCM_KUBECONFIG="$KWOK_WORKDIR/kubeconfig" KUBECONFIG="$KWOK_WORKDIR/kubeconfig"
CLUSTER="$KWOK_WORKDIR/clusters/qkcm-aot"
PORT=10557
cleanup() {
  [[ -n "${PID:-}" ]] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null || true
  "$ROOT/hack/local-cluster.sh" down >/dev/null 2>&1 || true
}
trap cleanup EXIT
log "cluster qkcm-aot (kwok, 3 nodes)"
"$ROOT/hack/local-cluster.sh" up --no-qkcm >/dev/null

rm -f "$CACHE" "$CACHE.config"
log "training run: $JAVA $OPTS -XX:AOTCacheOutput=$CACHE"
# shellcheck disable=SC2086 # OPTS is a list of options
"$JAVA" $OPTS -XX:AOTCacheOutput="$CACHE" -jar "$JAR" \
  --kubeconfig="$CLUSTER/kubeconfig.yaml" --root-ca-file="$CLUSTER/pki/ca.crt" \
  --service-account-private-key-file="$CLUSTER/pki/admin.key" \
  --bind-address=127.0.0.1 --secure-port=$PORT --leader-elect=true \
  --authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics \
  --node-monitor-period=25s --node-monitor-grace-period=200s >"$KWOK_WORKDIR/training.log" 2>&1 &
PID=$!
for _ in $(seq 600); do
  curl -sk "https://127.0.0.1:$PORT/healthz" 2>/dev/null | grep -q ok && break
  kill -0 "$PID" 2>/dev/null || { tail -20 "$KWOK_WORKDIR/training.log" >&2; exit 1; }
  sleep 0.2
done
log "workload"
k() { kubectl "$@" >/dev/null; }
k create namespace train
k -n train create serviceaccount default 2>/dev/null || true
k -n train create deployment web --image=registry.k8s.io/pause:3.10 --replicas=30
k -n train create job once --image=registry.k8s.io/pause:3.10
k -n train rollout status deployment/web --timeout=180s
k -n train annotate deployment web --overwrite bench/revision=2
k -n train patch deployment web -p '{"spec":{"template":{"metadata":{"annotations":{"rev":"2"}}}}}'
k -n train rollout status deployment/web --timeout=180s
k -n train scale deployment web --replicas=5
sleep 5
k -n train delete deployment web
k -n train delete job once
sleep 10
log "stopping qkcm: the JVM writes the cache"
kill "$PID"
wait "$PID" || true
PID=
[[ -f "$CACHE" ]] || { echo "aot-train: no cache written; see $KWOK_WORKDIR/training.log" >&2; exit 1; }
log "$CACHE: $(du -h "$CACHE" | cut -f1)"
