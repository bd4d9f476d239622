#!/usr/bin/env bash
# A local cluster made of real parts, with qkcm as its only controller manager:
# etcd, kube-apiserver, kube-scheduler and kwok (fake nodes that run pods) from
# hack/install-control-plane.sh, started by kwokctl's binary runtime with its own
# kube-controller-manager disabled; qkcm runs in the foreground with its logs on this terminal.
#
# Usage:
#   hack/local-cluster.sh [up]     start (or restart) the cluster and run qkcm; Ctrl-C stops everything
#   hack/local-cluster.sh down     tear down a cluster left running (e.g. after `up --detach`)
#   hack/local-cluster.sh up --detach   start the cluster and qkcm in the background and return
#   hack/local-cluster.sh up --no-qkcm  start the cluster only, without any controller manager, and
#                                       print the `./mvnw quarkus:dev` command that runs qkcm against it
#                                       (dev mode, live reload); its -D flags also go to
#                                       <cluster dir>/quarkus-dev.args, one per line
#
# Settings (environment):
#   QKCM_CLUSTER_NAME   kwokctl cluster name (default qkcm)
#   QKCM_NODES          number of kwok nodes (default 3; each has capacity for 110 pods)
#   QKCM_KUBECONFIG     kubeconfig to write (default ~/.kube/config, current-context set to the cluster)
#   QKCM_BINARY         controller manager to run (default bin/qkcm: the native binary if built, else the JVM app)
#   QKCM_ARGS           extra flags for qkcm (e.g. "--kube-api-qps=100 --kube-api-burst=200")
#   QKCM_SECURE_PORT    qkcm's --secure-port (default 10257, with --no-qkcm 10357 as dev mode's default)
#   KWOK_WORKDIR        where kwokctl keeps its clusters (default ~/.kwok)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NAME="${QKCM_CLUSTER_NAME:-qkcm}"
NODES="${QKCM_NODES:-3}"
KUBECONFIG_OUT="${QKCM_KUBECONFIG:-$HOME/.kube/config}"
export KWOK_WORKDIR="${KWOK_WORKDIR:-$HOME/.kwok}"
CLUSTER_DIR="$KWOK_WORKDIR/clusters/$NAME"
PIDFILE="$CLUSTER_DIR/qkcm.pid"

log() { printf '[local-cluster %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

cmd="${1:-up}"
detach=false
noqkcm=false
for opt in "${@:2}"; do
  case "$opt" in
    --detach) detach=true ;;
    --no-qkcm) noqkcm=true ;;
    *) echo "usage: hack/local-cluster.sh [up [--detach] [--no-qkcm]|down]" >&2; exit 1 ;;
  esac
done

BIN="$("$ROOT/hack/install-control-plane.sh" --print-dir)"

down() {
  if [[ -f "$PIDFILE" ]]; then
    local pid
    pid="$(cat "$PIDFILE")"
    if kill -0 "$pid" 2>/dev/null; then
      log "stopping qkcm (pid $pid)"
      kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
      kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$PIDFILE"
  fi
  if [[ -d "$CLUSTER_DIR" ]]; then
    log "deleting cluster $NAME"
    "$BIN/kwokctl" delete cluster --name "$NAME" --kubeconfig "$KUBECONFIG_OUT" >/dev/null 2>&1 || true
  fi
}

case "$cmd" in
  down) down; log "down"; exit 0 ;;
  up) ;;
  *) echo "usage: hack/local-cluster.sh [up [--detach] [--no-qkcm]|down]" >&2; exit 1 ;;
esac

"$ROOT/hack/install-control-plane.sh"

QKCM="${QKCM_BINARY:-$ROOT/bin/qkcm}"
if ! $noqkcm && [[ -z "${QKCM_BINARY:-}" ]] && ! ls "$ROOT"/target/*-runner >/dev/null 2>&1 \
   && [[ ! -f "$ROOT/target/quarkus-app/quarkus-run.jar" || -n "$(find "$ROOT/src/main" "$ROOT/pom.xml" -newer "$ROOT/target/quarkus-app/quarkus-run.jar" -print -quit)" ]]; then
  log "building qkcm (./mvnw package -DskipTests)"
  (cd "$ROOT" && ./mvnw -q -B package -DskipTests)
fi

# Running twice must not leave stray processes or ports: always start from a clean slate.
down

log "creating cluster $NAME: etcd, kube-apiserver, kube-scheduler, kwok ($NODES nodes)"
mkdir -p "$(dirname "$KUBECONFIG_OUT")"
"$BIN/kwokctl" create cluster --name "$NAME" --runtime binary \
  --etcd-binary "$BIN/etcd" --kube-apiserver-binary "$BIN/kube-apiserver" \
  --kube-scheduler-binary "$BIN/kube-scheduler" --kwok-controller-binary "$BIN/kwok" \
  --disable kube-controller-manager --kubeconfig "$KUBECONFIG_OUT" --wait 2m >/dev/null
"$BIN/kwokctl" --name "$NAME" scale node --replicas "$NODES" >/dev/null

CLUSTER_KUBECONFIG="$CLUSTER_DIR/kubeconfig.yaml"
PORT="${QKCM_SECURE_PORT:-$($noqkcm && echo 10357 || echo 10257)}"
# The flags kwokctl gives a kube-controller-manager it launches, plus the cluster's CA and the
# service-account signing key for the token and root-CA controllers.
ARGS=(
  "--kubeconfig=$CLUSTER_KUBECONFIG"
  "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics"
  "--bind-address=127.0.0.1" "--secure-port=$PORT"
  "--root-ca-file=$CLUSTER_DIR/pki/ca.crt"
  "--service-account-private-key-file=$CLUSTER_DIR/pki/admin.key"
  "--leader-elect=true"
  # what kwokctl passes: kwok renews node leases slowly, so node health uses long periods
  "--node-monitor-period=25s" "--node-monitor-grace-period=200s"
)
# shellcheck disable=SC2206
ARGS+=(${QKCM_ARGS:-})

if $noqkcm; then
  # Dev mode takes the flags as config properties (qkcm.<flag>): QkcmMain's command line is not used there.
  DEV=()
  for a in "${ARGS[@]}"; do DEV+=("-Dqkcm.${a#--}"); done
  printf '%s\n' "${DEV[@]}" > "$CLUSTER_DIR/quarkus-dev.args"
  cat >&2 <<EOF

  cluster:    $NAME ($NODES kwok nodes), no controller manager; kubeconfig written to $KUBECONFIG_OUT (context kwok-$NAME)
  dev mode:   cd $ROOT && ./mvnw quarkus:dev ${DEV[*]}
              (the -D flags are also in $CLUSTER_DIR/quarkus-dev.args, one per line)
  try:        kubectl apply -f $ROOT/examples/ && kubectl get deploy,rs,pods -w
  stop:       hack/local-cluster.sh down

EOF
  exit 0
fi

cat >&2 <<EOF

  cluster:    $NAME ($NODES kwok nodes), kubeconfig written to $KUBECONFIG_OUT (context kwok-$NAME)
  try:        kubectl apply -f $ROOT/examples/ && kubectl get deploy,rs,pods -w
  qkcm:       $QKCM ${ARGS[*]}
  health:     curl -k https://127.0.0.1:$PORT/healthz
  stop:       Ctrl-C$($detach && echo " is not available (detached): hack/local-cluster.sh down")

EOF

if $detach; then
  nohup "$QKCM" "${ARGS[@]}" > "$CLUSTER_DIR/qkcm.log" 2>&1 &
  echo $! > "$PIDFILE"
  log "qkcm running in the background (pid $(cat "$PIDFILE")), logs in $CLUSTER_DIR/qkcm.log"
  exit 0
fi

trap 'echo >&2; down; log "stopped"; exit 0' INT TERM
"$QKCM" "${ARGS[@]}" &
echo $! > "$PIDFILE"
set +e
wait "$(cat "$PIDFILE")"
rc=$?
set -e
# qkcm exited by itself (not Ctrl-C): tear down as well, and report how it ended
down
log "qkcm exited with code $rc"
exit "$rc"
