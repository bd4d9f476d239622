#!/usr/bin/env bash
# Checks that `./mvnw quarkus:dev` runs qkcm against a local cluster, end to end and non-interactively:
#   1. a local cluster without a controller manager (hack/local-cluster.sh up --no-qkcm, its own name,
#      kwok dir and kubeconfig, so it never touches another cluster on this machine);
#   2. dev mode with the flags the cluster script prints, on free ports (Quarkus HTTP, --secure-port),
#      console and debugger off; waits for the controllers (Lease held, /q/health/ready: informers synced)
#      and the dev console (/q/qkcm/state); the Dev UI lists qkcm's card (the devui/ extension) and its
#      JSON-RPC methods (over the Dev UI's WebSocket, hack/dev_ui_rpc.py) give the live state;
#   3. a Deployment whose pods are created by qkcm and made Running by kwok; the card's data shows the
#      ReplicaSet controller's queue at work;
#   4. a live reload (a controller's source touched): the restarted app holds the Lease again, has the
#      same threads as before (nothing leaked) and scales the Deployment;
#   5. stops dev mode (SIGTERM: the Lease is released) and the cluster.
# Exit code 0 when every step passed. Logs: $WORK/dev.log.
#
# Usage: hack/dev-mode-check.sh        (environment: MAVEN_ARGS, read by Maven itself, e.g. "-o";
#                                       QKCM_DEVCHECK_KEEP=true leaves the cluster and dev mode running;
#                                       QKCM_DEVCHECK_SCREENSHOT=docs/dev-ui-card.png also takes a screenshot
#                                       of the card's page with chromium, hack/dev_ui_screenshot.py)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="${QKCM_DEVCHECK_DIR:-${TMPDIR:-/tmp}/qkcm-dev-mode-check}"
export QKCM_CLUSTER_NAME=devcheck KWOK_WORKDIR="$WORK/kwok" QKCM_KUBECONFIG="$WORK/kubeconfig" QKCM_NODES=2
export KUBECONFIG="$QKCM_KUBECONFIG"
BIN="$("$ROOT/hack/install-control-plane.sh" --print-dir)"
KUBECTL="$BIN/kubectl"
NS=dev-mode-check
START=$(date +%s)

log() { printf '[dev-mode-check %s +%3ds] %s\n' "$(date +%H:%M:%S)" "$(( $(date +%s) - START ))" "$*" >&2; }
fail() { log "FAIL: $*"; log "last lines of $WORK/dev.log:"; tail -40 "$WORK/dev.log" >&2 || true; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# until CMD succeeds, at most $1 seconds
wait_for() {
  local timeout=$1 what=$2; shift 2
  local deadline=$(( $(date +%s) + timeout ))
  until "$@" >/dev/null 2>&1; do
    [[ $(date +%s) -lt $deadline ]] || fail "timed out after ${timeout}s waiting for $what"
    kill -0 "$DEV_PID" 2>/dev/null || fail "dev mode exited while waiting for $what"
    sleep 2
  done
  log "ok: $what"
}

DEV_PID=
cleanup() {
  local rc=$?
  if [[ "${QKCM_DEVCHECK_KEEP:-false}" == true ]]; then
    log "kept: dev mode (process group $DEV_PID), cluster $QKCM_CLUSTER_NAME (KUBECONFIG=$KUBECONFIG)"
    exit $rc
  fi
  if [[ -n "$DEV_PID" ]] && kill -0 "$DEV_PID" 2>/dev/null; then
    kill -TERM -- "-$DEV_PID" 2>/dev/null || true
    for _ in $(seq 1 60); do kill -0 "$DEV_PID" 2>/dev/null || break; sleep 1; done
    kill -KILL -- "-$DEV_PID" 2>/dev/null || true
  fi
  "$ROOT/hack/local-cluster.sh" down >/dev/null 2>&1 || true
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$WORK"
HTTP_PORT=$(free_port)
SECURE_PORT=$(free_port)
log "cluster $QKCM_CLUSTER_NAME in $KWOK_WORKDIR"
QKCM_SECURE_PORT=$SECURE_PORT "$ROOT/hack/local-cluster.sh" up --no-qkcm > "$WORK/cluster.log" 2>&1 \
  || { cat "$WORK/cluster.log" >&2; fail "local cluster did not start"; }
mapfile -t FLAGS < "$KWOK_WORKDIR/clusters/$QKCM_CLUSTER_NAME/quarkus-dev.args"
log "cluster up; starting dev mode (HTTP 127.0.0.1:$HTTP_PORT, secure port $SECURE_PORT)"

cd "$ROOT"
# setsid: dev mode (Maven and the application's JVM) in a process group of its own, stopped as one
setsid ./mvnw -B -ntp quarkus:dev -Dquarkus.console.enabled=false -Ddebug=false \
  -Dquarkus.http.port="$HTTP_PORT" "${FLAGS[@]}" > "$WORK/dev.log" 2>&1 < /dev/null &
DEV_PID=$!
Q="http://127.0.0.1:$HTTP_PORT"

state() { curl -sf -m 20 "$Q/q/qkcm/state"; }
leading_and_running() {
  state | python3 -c '
import json, sys
s = json.load(sys.stdin)
le = s.get("leaderElection", {})
c = s.get("controllers", [])
sys.exit(0 if s.get("running") and le.get("leading") and le.get("holder") == le.get("identity")
         and c and all(x["state"] == "running" for x in c) and s.get("informersSynced") else 1)'
}
threads() { local n=0 p; for p in $(pgrep -s "$DEV_PID" java); do n=$(( n + $(ls "/proc/$p/task" | wc -l) )); done; echo "$n"; }

wait_for 900 "dev mode started, informers synced (/q/health/ready)" curl -sf -m 20 "$Q/q/health/ready"
wait_for 120 "Lease held and every controller running (/q/qkcm/state)" leading_and_running
[[ "$(curl -sfk -m 20 "https://127.0.0.1:$SECURE_PORT/healthz")" == ok ]] || fail "secure port /healthz is not ok"
log "ok: https://127.0.0.1:$SECURE_PORT/healthz"
PAGE="$(curl -sf -m 20 "$Q/q/qkcm")" || fail "dev console page not served"
[[ "$PAGE" == *"qkcm — dev console"* ]] || fail "the dev console page is not qkcm's"
log "ok: dev console page $Q/q/qkcm"
curl -sf -m 60 -o /dev/null "$Q/q/dev-ui/" || fail "the Dev UI is not served"
log "ok: Dev UI $Q/q/dev-ui/"
# qkcm's card: listed in the Dev UI's data (the extensions page), its component served
curl -sf -m 60 "$Q/q/dev-ui/devui-data.js" | tr -d ' \n' | grep -q '"componentName":"qwc-qkcm-controllers"' \
  || fail "the Dev UI does not list qkcm's card"
curl -sf -m 60 "$Q/q/dev-ui/qkcm-devui/qwc-qkcm-controllers.js" | grep -q "customElements.define('qwc-qkcm-controllers'" \
  || fail "the card's web component is not served"
# its JSON-RPC methods (what the card's page calls): the live state, the same as /q/qkcm/state
rpc() { python3 "$ROOT/hack/dev_ui_rpc.py" "$Q" "$1"; }
card_live() {
  rpc qkcm-devui_getState | python3 -c '
import json, sys
s = json.load(sys.stdin)
le, c, inf = s.get("leaderElection", {}), s.get("controllers", []), s.get("informers", [])
ok = (s.get("running") and le.get("leading") and le.get("holder") == le.get("identity")
      and c and all(x["state"] == "running" for x in c)
      and all("depth" in q and "retries" in q for x in c for q in x["queues"])
      and any(x["name"] == "replicaset-controller" for x in c)
      and inf and all(i["synced"] for i in inf) and "notImplemented" in s)
sys.exit(0 if ok else 1)' && [[ "$(rpc qkcm-devui_getSummary)" =~ ^\"([0-9]+)/([0-9]+)\ running,\ leader\"$ ]] \
     && [[ ${BASH_REMATCH[1]} == "${BASH_REMATCH[2]}" ]]
}
wait_for 60 "Dev UI card listed; its JSON-RPC state: Lease held, controllers running, queues, informers synced" card_live
T_UP=$(( $(date +%s) - START ))

"$KUBECTL" create namespace "$NS" >/dev/null
"$KUBECTL" -n "$NS" create deployment web --image=nginx --replicas=3 >/dev/null
running_pods() {
  [[ $("$KUBECTL" -n "$NS" get pods -l app=web --field-selector=status.phase=Running -o name | wc -l) -eq $1 ]]
}
wait_for 180 "3 pods of the Deployment created and Running" running_pods 3
wait_for 120 "Deployment Available" "$KUBECTL" -n "$NS" wait deployment/web --for=condition=Available --timeout=5s
# the card shows the work done: the ReplicaSet controller's queue took the new ReplicaSet (adds > 0)
replicaset_adds() {
  rpc qkcm-devui_getState | python3 -c '
import json, sys
s = json.load(sys.stdin)
rs = [x for x in s["controllers"] if x["name"] == "replicaset-controller"][0]
sys.exit(0 if sum(q["adds"] for q in rs["queues"]) > 0 else 1)'
}
wait_for 60 "the card's data shows the replicaset queue's adds" replicaset_adds
if [[ -n "${QKCM_DEVCHECK_SCREENSHOT:-}" ]]; then
  python3 "$ROOT/hack/dev_ui_screenshot.py" "$Q/q/dev-ui/qkcm-devui/controllers" "$QKCM_DEVCHECK_SCREENSHOT" 15 1500x1400 \
    >/dev/null || fail "screenshot of the card's page"
  log "ok: screenshot of the card's page: $QKCM_DEVCHECK_SCREENSHOT"
fi

sleep 5
BEFORE=$(threads)
log "live reload: touching a controller's source ($BEFORE threads before)"
RESTARTS=$(grep -c "Restarting quarkus due to changes" "$WORK/dev.log" || true)
touch "$ROOT/app/src/main/java/io/qkcm/controller/deployment/DeploymentController.java"
restarted() { [[ $(grep -c "Restarting quarkus due to changes" "$WORK/dev.log") -gt $RESTARTS ]]; }
# a request makes dev mode look for changes at once
curl -s -m 300 -o /dev/null "$Q/q/health/live" || true
wait_for 300 "dev mode restarted the application" restarted
wait_for 300 "after the reload: Lease held again and every controller running" leading_and_running
wait_for 60 "after the reload: the card's JSON-RPC state is live again" card_live
"$KUBECTL" -n "$NS" scale deployment web --replicas=5 >/dev/null
wait_for 180 "after the reload: scaled to 5 Running pods" running_pods 5
sleep 5
AFTER=$(threads)
log "threads: $BEFORE before the reload, $AFTER after"
# workers are made on demand, so the counts differ a little; a leak would add every informer's,
# controller's and Operator's threads again (over a hundred)
[[ $AFTER -le $(( BEFORE + 40 )) ]] || fail "threads grew from $BEFORE to $AFTER over one reload: something leaked"
grep -q "gave up lease" "$WORK/dev.log" || fail "the stopped application did not give up the Lease"
T_CHECKS=$(( $(date +%s) - START ))

log "stopping dev mode (SIGTERM)"
kill -TERM -- "-$DEV_PID"
for _ in $(seq 1 60); do kill -0 "$DEV_PID" 2>/dev/null || break; sleep 1; done
kill -0 "$DEV_PID" 2>/dev/null && fail "dev mode still running 60s after SIGTERM"
pgrep -s "$DEV_PID" >/dev/null && fail "processes of dev mode left after it exited"
HOLDER=$("$KUBECTL" -n kube-system get lease kube-controller-manager -o jsonpath='{.spec.holderIdentity}')
[[ -z "$HOLDER" ]] || fail "Lease still held by $HOLDER after dev mode stopped"
log "ok: dev mode stopped, Lease released"
DEV_PID=
log "PASSED in $(( $(date +%s) - START ))s (dev mode up and synced at +${T_UP}s, checks done at +${T_CHECKS}s)"
