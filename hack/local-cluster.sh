#!/usr/bin/env bash
# A local cluster made of real parts, with qkcm as its only controller manager:
# etcd, kube-apiserver, kube-scheduler and kwok (fake nodes that run pods) from
# hack/install-control-plane.sh, and qkcm in the place of kube-controller-manager — all started by
# kwokctl's binary runtime the way a kwokctl user would do it:
#
#   kwokctl create cluster --runtime binary --kube-controller-manager-binary bin/qkcm ...
#
# kwokctl runs `qkcm --version` (qkcm answers `Kubernetes v1.34.4 (qkcm ...)`, which kwokctl parses
# as 1.34.4) and starts it with the flags it gives upstream's kube-controller-manager: --kubeconfig,
# --authorization-always-allow-paths, --bind-address, --secure-port, --root-ca-file,
# --service-account-private-key-file (the cluster's CA and SA key) and the node monitor periods that
# match kwok's heartbeats. kwokctl scales every heartbeat by --heartbeat-factor (default 5: node Leases
# of 200 s renewed every ~50 s, and --node-monitor-grace-period=3m20s); this script creates the cluster
# with factor 1 — Leases of 40 s renewed every 10 s, --node-monitor-period=5s
# --node-monitor-grace-period=40s — so that a node that stops heartbeating is noticed as quickly as in a
# real cluster (upstream's default grace is 50 s). This script adds
# --bind-address=127.0.0.1 (the last flag wins, as with upstream's flag parser), --leader-elect=true
# and QKCM_ARGS through kwokctl's --extra-args. In the foreground qkcm's log is followed on this terminal.
#
# Usage:
#   hack/local-cluster.sh [up]     start (or restart) the cluster and follow qkcm's log; Ctrl-C stops everything
#   hack/local-cluster.sh down     tear down a cluster left running (e.g. after `up --detach`)
#   hack/local-cluster.sh up --detach   start the cluster, wait for qkcm's /healthz and return
#   hack/local-cluster.sh up --no-qkcm  start the cluster only, without any controller manager, and
#                                       print the `./mvnw quarkus:dev` command that runs qkcm against it
#                                       (dev mode, live reload); its -D flags also go to
#                                       <cluster dir>/quarkus-dev.args, one per line
#
# Settings (environment):
#   QKCM_CLUSTER_NAME   kwokctl cluster name (default qkcm)
#   KWOK_WORKDIR        kwokctl's work directory (default ~/.kwok); the cluster is $KWOK_WORKDIR/clusters/<name>
#   QKCM_NODES          number of kwok nodes (default 3; each has capacity for 110 pods)
#   QKCM_KUBECONFIG     kubeconfig to write (default ~/.kube/config, current-context set to the cluster)
#   QKCM_SECURE_PORT    qkcm's HTTPS port for /healthz and /metrics (default 10257; with --no-qkcm 10357,
#                       dev mode's default)
#   QKCM_BINARY         controller manager to run (default bin/qkcm: the native binary if built, else
#                       the JVM app; upstream's kube-controller-manager works as well)
#   QKCM_ARGS           extra flags for qkcm, each as --name=value or --name (e.g. "--kube-api-qps=100 --kube-api-burst=200")
#   QKCM_KWOK_ARGS      extra flags for kwok, as QKCM_ARGS (bench/compare's nodes scenario: kwok managing only
#                       the nodes of a label selector, so that one node can be left to die)
#   QKCM_VERBOSE        1: show kwokctl's own output (otherwise kept in $KWOK_WORKDIR/<name>-kwokctl.log)
#   QKCM_METRICS        "metrics-server": the resource metrics API (metrics.k8s.io) served by metrics-server
#                       (hack/install-metrics-server.sh) through the aggregation layer, from kwok's emulated
#                       usage (a pod uses the CPU its annotation kwok.x-k8s.io/usage-cpu says), so that a
#                       HorizontalPodAutoscaler scales; default none
#   QKCM_STORAGE        "none": no default StorageClass; otherwise (default) a StorageClass `standard`, marked
#                       default, served by a real external provisioner (hack/provisioner: hostPath volumes
#                       under the cluster directory, like kind's local-path provisioner), so that claims
#                       (a StatefulSet's volumeClaimTemplates) are provisioned and bound
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NAME="${QKCM_CLUSTER_NAME:-qkcm}"
NODES="${QKCM_NODES:-3}"
KUBECONFIG_OUT="${QKCM_KUBECONFIG:-$HOME/.kube/config}"
VERBOSE="${QKCM_VERBOSE:-}"
export KWOK_WORKDIR="${KWOK_WORKDIR:-$HOME/.kwok}"
CLUSTER_DIR="$KWOK_WORKDIR/clusters/$NAME"
# kwokctl's binary runtime keeps each component's pid and log under the cluster directory
PIDFILE="$CLUSTER_DIR/pids/kube-controller-manager.pid"
QKCM_LOG="$CLUSTER_DIR/logs/kube-controller-manager.log"
KWOKCTL_LOG="$KWOK_WORKDIR/$NAME-kwokctl.log"

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

PORT="${QKCM_SECURE_PORT:-$($noqkcm && echo 10357 || echo 10257)}"
BIN="$("$ROOT/hack/install-control-plane.sh" --print-dir)"

# kwokctl, with its output on the terminal only when QKCM_VERBOSE=1 (it logs JSON lines when its
# stderr is not a terminal); otherwise appended to $KWOKCTL_LOG and shown when it fails.
kwokctl() {
  if [[ "$VERBOSE" == 1 ]]; then
    "$BIN/kwokctl" "$@"
  else
    mkdir -p "$KWOK_WORKDIR"
    if ! "$BIN/kwokctl" "$@" >>"$KWOKCTL_LOG" 2>&1; then
      log "kwokctl $1 $2 failed; its output ($KWOKCTL_LOG):"
      tail -n 20 "$KWOKCTL_LOG" >&2
      return 1
    fi
  fi
}

qkcm_pid() { [[ -f "$PIDFILE" ]] && cat "$PIDFILE"; }

down() {
  local pid
  # kwokctl stops components with SIGKILL; stop qkcm first with SIGTERM so that it drains, releases
  # its lease and logs its shutdown, as a controller manager is stopped in a real cluster.
  pid="$(qkcm_pid || true)"
  if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
    log "stopping qkcm (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 75); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  fi
  if [[ -f "$CLUSTER_DIR/provisioner.pid" ]]; then
    kill "$(cat "$CLUSTER_DIR/provisioner.pid")" 2>/dev/null || true
  fi
  if [[ -d "$CLUSTER_DIR" ]]; then
    log "deleting cluster $NAME"
    kwokctl delete cluster --name "$NAME" --kubeconfig "$KUBECONFIG_OUT" || true
  fi
}

case "$cmd" in
  down) down; log "down"; exit 0 ;;
  up) ;;
  *) echo "usage: hack/local-cluster.sh [up [--detach] [--no-qkcm]|down]" >&2; exit 1 ;;
esac

# QKCM_ARGS as kwokctl --extra-args (component=name=value); kwokctl appends them as --name=value.
# QKCM_KWOK_ARGS likewise for kwok-controller.
EXTRA=(--extra-args "kube-controller-manager=bind-address=127.0.0.1"
       --extra-args "kube-controller-manager=leader-elect=true")
# shellcheck disable=SC2206 # QKCM_ARGS is a list of flags
USER_ARGS=(${QKCM_ARGS:-})
for arg in ${USER_ARGS[@]+"${USER_ARGS[@]}"}; do
  case "$arg" in
    --*=*) kv="${arg#--}"; EXTRA+=(--extra-args "kube-controller-manager=${kv%%=*}=${kv#*=}") ;;
    --*) EXTRA+=(--extra-args "kube-controller-manager=${arg#--}=true") ;;
    *) echo "local-cluster: QKCM_ARGS: write each flag as --name=value or --name, got: $arg" >&2; exit 1 ;;
  esac
done
# QKCM_KWOK_ARGS go to kwok through a kwokctl configuration (its componentsPatches): kwokctl v0.7.0's
# --extra-args panics when two components each get more than one.
KWOK_EXTRA=()
if [[ -n "${QKCM_KWOK_ARGS:-}" ]]; then
  mkdir -p "$KWOK_WORKDIR"
  kwok_config="$KWOK_WORKDIR/$NAME-kwokctl-patches.yaml"
  { echo "apiVersion: config.kwok.x-k8s.io/v1alpha1"; echo "kind: KwokctlConfiguration"
    echo "componentsPatches:"; echo "- name: kwok-controller"; echo "  extraArgs:"
    # shellcheck disable=SC2206 # QKCM_KWOK_ARGS is a list of flags
    KWOK_ARGS=(${QKCM_KWOK_ARGS})
    for arg in "${KWOK_ARGS[@]}"; do
      case "$arg" in
        --*=*) kv="${arg#--}"; printf '  - key: %s\n    value: "%s"\n' "${kv%%=*}" "${kv#*=}" ;;
        *) echo "local-cluster: QKCM_KWOK_ARGS: write each flag as --name=value, got: $arg" >&2; exit 1 ;;
      esac
    done; } > "$kwok_config"
  KWOK_EXTRA=(--config "$kwok_config")
fi

"$ROOT/hack/install-control-plane.sh"
if [[ "${QKCM_METRICS:-none}" == metrics-server ]]; then
  METRICS_SERVER="$("$ROOT/hack/install-metrics-server.sh" --print-path)"
  [[ -x "$METRICS_SERVER" ]] || "$ROOT/hack/install-metrics-server.sh" >&2
  KWOK_EXTRA+=(--enable metrics-server --metrics-server-binary "$METRICS_SERVER")
elif [[ "${QKCM_METRICS:-none}" != none ]]; then
  echo "local-cluster: QKCM_METRICS: metrics-server or none, got: $QKCM_METRICS" >&2; exit 1
fi

QKCM="$(readlink -f "${QKCM_BINARY:-$ROOT/bin/qkcm}")"
if ! $noqkcm && [[ -z "${QKCM_BINARY:-}" ]] && ! ls "$ROOT"/app/target/*-runner >/dev/null 2>&1 \
   && [[ ! -f "$ROOT/app/target/quarkus-app/quarkus-run.jar" || -n "$(find "$ROOT/app/src/main" "$ROOT/devui" "$ROOT/pom.xml" "$ROOT/app/pom.xml" -path "$ROOT/devui/*/target" -prune -o -newer "$ROOT/app/target/quarkus-app/quarkus-run.jar" -print -quit)" ]]; then
  log "building qkcm (./mvnw package -DskipTests)"
  (cd "$ROOT" && ./mvnw -q -B package -DskipTests)
fi

# Running twice must not leave stray processes or ports: always start from a clean slate.
down
mkdir -p "$KWOK_WORKDIR" && : > "$KWOKCTL_LOG"

mkdir -p "$(dirname "$KUBECONFIG_OUT")"
# kwokctl picks "unused" ports by probing downwards from 32767 in every process, so two clusters
# created at the same moment (hack/e2e.sh --compare, E2EShortIT beside a local cluster) get the same
# etcd and kube-apiserver ports and one fails to start. Cluster creation is therefore serialised
# machine-wide; `create cluster --wait` returns once the cluster serves, its ports bound. The lock's
# descriptor is closed for kwokctl, so the cluster's processes never inherit (and hold) it.
exec {create_lock}>/tmp/qkcm-kwokctl-create.lock
flock "$create_lock"
if $noqkcm; then
  log "creating cluster $NAME: etcd, kube-apiserver, kube-scheduler, kwok ($NODES nodes), no controller manager"
  kwokctl create cluster --name "$NAME" --runtime binary --heartbeat-factor 1 \
    --etcd-binary "$BIN/etcd" --kube-apiserver-binary "$BIN/kube-apiserver" \
    --kube-scheduler-binary "$BIN/kube-scheduler" --kwok-controller-binary "$BIN/kwok" \
    --disable kube-controller-manager ${KWOK_EXTRA[@]+"${KWOK_EXTRA[@]}"} --kubeconfig "$KUBECONFIG_OUT" --wait 2m {create_lock}>&-
  kwokctl --name "$NAME" scale node --replicas "$NODES" {create_lock}>&-
else
  log "creating cluster $NAME: etcd, kube-apiserver, kube-scheduler, kwok ($NODES nodes), qkcm as kube-controller-manager"
  kwokctl create cluster --name "$NAME" --runtime binary --heartbeat-factor 1 \
    --etcd-binary "$BIN/etcd" --kube-apiserver-binary "$BIN/kube-apiserver" \
    --kube-scheduler-binary "$BIN/kube-scheduler" --kwok-controller-binary "$BIN/kwok" \
    --kube-controller-manager-binary "$QKCM" --kube-controller-manager-port "$PORT" \
    "${EXTRA[@]}" ${KWOK_EXTRA[@]+"${KWOK_EXTRA[@]}"} --kubeconfig "$KUBECONFIG_OUT" --wait 2m {create_lock}>&-
  kwokctl --name "$NAME" scale node --replicas "$NODES" {create_lock}>&-
  # the log's path before kwokctl started qkcm (bench/ and the README name it)
  ln -sfn logs/kube-controller-manager.log "$CLUSTER_DIR/qkcm.log"
fi
exec {create_lock}>&-

if [[ "${QKCM_STORAGE:-provisioner}" != none ]]; then
  PROVISIONER="$("$ROOT/hack/install-provisioner.sh" --print-path)"
  [[ -x "$PROVISIONER" ]] || "$ROOT/hack/install-provisioner.sh" >&2
  "$PROVISIONER" --kubeconfig="$CLUSTER_DIR/kubeconfig.yaml" --base-dir="$CLUSTER_DIR/volumes" \
    >"$CLUSTER_DIR/provisioner.log" 2>&1 &
  echo $! > "$CLUSTER_DIR/provisioner.pid"
  "$BIN/kubectl" --kubeconfig "$CLUSTER_DIR/kubeconfig.yaml" apply -f "$ROOT/hack/provisioner/storageclass.yaml" >/dev/null
  log "default StorageClass standard: hack/provisioner (pid $(cat "$CLUSTER_DIR/provisioner.pid"), log $CLUSTER_DIR/provisioner.log)"
fi

if $noqkcm; then
  # The flags kwokctl gives a kube-controller-manager it launches, plus the ones this script adds.
  ARGS=(
    "--kubeconfig=$CLUSTER_DIR/kubeconfig.yaml"
    "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics"
    "--bind-address=127.0.0.1" "--secure-port=$PORT"
    "--root-ca-file=$CLUSTER_DIR/pki/ca.crt"
    "--service-account-private-key-file=$CLUSTER_DIR/pki/admin.key"
    "--leader-elect=true"
    "--node-monitor-period=5s" "--node-monitor-grace-period=40s"
  )
  ARGS+=(${USER_ARGS[@]+"${USER_ARGS[@]}"})
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

pid="$(qkcm_pid || true)"
if [[ -z "$pid" ]] || ! kill -0 "$pid" 2>/dev/null; then
  log "qkcm is not running; its log ($QKCM_LOG):"
  tail -n 20 "$QKCM_LOG" >&2 || true
  down
  exit 1
fi

# qkcm's command line as kwokctl wrote it into the cluster's configuration
qkcm_flags="$(awk '/^- args:/{a=""; inargs=1; next} inargs && /^  - /{sub(/^  - /,""); a=a" "$0; next}
  {inargs=0} /^  binary: .*\/kube-controller-manager$/{print a; exit}' "$CLUSTER_DIR/kwok.yaml")"

cat >&2 <<EOF

  cluster:    $NAME ($NODES kwok nodes), kubeconfig written to $KUBECONFIG_OUT (context kwok-$NAME)
  try:        kubectl apply -f $ROOT/examples/ && kubectl get deploy,rs,pods -w
  qkcm:       $QKCM$qkcm_flags
  pid, log:   $pid, $QKCM_LOG
  health:     curl -k https://127.0.0.1:$PORT/healthz
  stop:       Ctrl-C$($detach && echo " is not available (detached): hack/local-cluster.sh down")

EOF

if $detach; then
  for _ in $(seq 1 120); do
    if ! kill -0 "$pid" 2>/dev/null; then
      log "qkcm exited; its log ($QKCM_LOG):"
      tail -n 20 "$QKCM_LOG" >&2 || true
      down
      exit 1
    fi
    command -v curl >/dev/null || break
    [[ "$(curl -sk --max-time 2 "https://127.0.0.1:$PORT/healthz" 2>/dev/null)" == ok ]] && break
    sleep 1
  done
  log "qkcm running in the background (pid $pid), logs in $QKCM_LOG"
  exit 0
fi

# Follow qkcm's log until it exits; Ctrl-C stops qkcm (SIGTERM) and deletes the cluster.
tail -n +1 -F --pid="$pid" "$QKCM_LOG" 2>/dev/null &
tailpid=$!
trap 'kill "$tailpid" 2>/dev/null || true; echo >&2; down; log "stopped"; exit 0' INT TERM
set +e
wait "$tailpid"
set -e
trap - INT TERM
# qkcm exited by itself (not Ctrl-C): tear down as well. kwokctl started it, so its exit code is not
# ours to collect; its last log lines above say how it ended.
log "qkcm (pid $pid) exited by itself; see its last log lines above"
down
exit 1
