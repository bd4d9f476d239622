#!/usr/bin/env bash
# End-to-end proof of horizontal-pod-autoscaler-controller on CPU usage, with a real metrics.k8s.io:
# a kwokctl cluster (binary runtime: etcd, kube-apiserver with aggregation, kube-scheduler, kwok) with
# metrics-server v0.8.0 (hack/install-metrics-server.sh) scraping kwok's emulated kubelet
# /metrics/resource (kwokctl's Metric "metrics-resource" and ClusterResourceUsage
# "usage-from-annotation": a pod uses the CPU its annotation kwok.x-k8s.io/usage-cpu says), and qkcm
# as the only controller manager (deployment, replicaset, serviceaccount, node-lifecycle (it lifts the
# node's not-ready taint) and HPA controllers).
#
# A Deployment of 1 replica requesting 100m CPU whose pods use 300m, under an HPA of target 50%
# utilization and maxReplicas 3, must be scaled to 3 by qkcm's HPA controller (event SuccessfulRescale
# "New size: 3; reason: cpu resource utilization (percentage of request) above target", status
# currentMetrics with the pods' utilization). Then, the HPA given a 60 s scale-down stabilization window
# (spec.behavior) and the usage dropped to 10m on every pod: the HPA must report AbleToScale
# ScaleDownStabilized while web stays at 3, and scale down to minReplicas 1 no sooner than the window
# allows (the last high recommendation is at most one sync period before the drop).
#
# Then custom and external metrics, served by hack/test-metrics-api/server.py behind the aggregation
# layer (custom.metrics.k8s.io/v1beta2, external.metrics.k8s.io/v1beta1): a Deployment "worker" under an
# HPA with a Pods, an Object and an External metric goes 1 -> 3 on the pods metric, 3 -> 4 on the external
# one, 4 -> 2 on the object one, each with upstream's SuccessfulRescale reason and status.currentMetrics.
#
# Last, the metrics API returns garbage: metrics.k8s.io's APIService is pointed at the same server
# (discovery answered correctly, pod metrics as a body that is not JSON, a cpu usage that is not a
# quantity, items that are not a list) while the pods' usage says 300m: the HPA must report
# ScalingActive=False FailedGetResourceMetric with upstream's message and event, keep web at 1, and read
# the metrics once per sync period (no hot loop).
#
# Usage: hack/e2e-hpa.sh            (needs the JVM app built: ./mvnw -pl app package -DskipTests)
#        HPA_E2E_MANAGER=upstream hack/e2e-hpa.sh   the same run with upstream's kube-controller-manager
#        v1.34.4 as the controller manager (the reference: the same checks, the same texts; its verdict line
#        says "upstream's HPA")
# Environment: HPA_E2E_KEEP=1 keeps the cluster and qkcm running at the end (their pids and kubeconfig
# are printed); HPA_E2E_TIMEOUT seconds per wait (default 180).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NAME=qkcm-hpa-e2e
export KWOK_WORKDIR="${HPA_E2E_WORKDIR:-/tmp/qkcm-hpa-e2e}"
CLUSTER_DIR="$KWOK_WORKDIR/clusters/$NAME"
export KUBECONFIG="$KWOK_WORKDIR/kubeconfig"
TIMEOUT="${HPA_E2E_TIMEOUT:-180}"
log() { printf '[e2e-hpa %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

"$ROOT/hack/install-control-plane.sh" >/dev/null
"$ROOT/hack/install-metrics-server.sh" >/dev/null
BIN="$("$ROOT/hack/install-control-plane.sh" --print-dir)"
METRICS_SERVER="$("$ROOT/hack/install-metrics-server.sh" --print-path)"
[[ -f "$ROOT/app/target/quarkus-app/quarkus-run.jar" ]] || ls "$ROOT"/app/target/*-runner >/dev/null 2>&1 \
  || { echo "e2e-hpa: build qkcm first (./mvnw -pl app package -DskipTests)" >&2; exit 1; }
kubectl() { "$BIN/kubectl" "$@"; }

QKCM_PID=""
TMA_PID=""
cleanup() {
  local rc=$?
  if [[ "${HPA_E2E_KEEP:-}" == 1 ]]; then
    log "kept: KUBECONFIG=$KUBECONFIG, qkcm pid $QKCM_PID (log $KWOK_WORKDIR/qkcm.log)"
    return
  fi
  [[ -n "$QKCM_PID" ]] && kill -TERM "$QKCM_PID" 2>/dev/null && wait "$QKCM_PID" 2>/dev/null || true
  [[ -n "$TMA_PID" ]] && kill -TERM "$TMA_PID" 2>/dev/null && wait "$TMA_PID" 2>/dev/null || true
  "$BIN/kwokctl" delete cluster --name "$NAME" >/dev/null 2>&1 || true
  exit $rc
}
trap cleanup EXIT

"$BIN/kwokctl" delete cluster --name "$NAME" >/dev/null 2>&1 || true
mkdir -p "$KWOK_WORKDIR"
log "creating cluster $NAME (metrics-server $METRICS_SERVER)"
# cluster creation is serialised machine-wide, as in hack/local-cluster.sh (kwokctl's port probing)
exec {create_lock}>/tmp/qkcm-kwokctl-create.lock
flock "$create_lock"
"$BIN/kwokctl" create cluster --name "$NAME" --runtime binary --heartbeat-factor 1 \
  --etcd-binary "$BIN/etcd" --kube-apiserver-binary "$BIN/kube-apiserver" \
  --kube-scheduler-binary "$BIN/kube-scheduler" --kwok-controller-binary "$BIN/kwok" \
  --disable kube-controller-manager --enable metrics-server --metrics-server-binary "$METRICS_SERVER" \
  --kubeconfig "$KUBECONFIG" --wait 2m {create_lock}>&- >"$KWOK_WORKDIR/kwokctl.log" 2>&1
"$BIN/kwokctl" --name "$NAME" scale node --replicas 1 {create_lock}>&- >>"$KWOK_WORKDIR/kwokctl.log" 2>&1
exec {create_lock}>&-

MANAGER="${HPA_E2E_MANAGER:-qkcm}"
case "$MANAGER" in
  qkcm) KCM=("$ROOT/bin/qkcm") ;;
  upstream) KCM=("$BIN/kube-controller-manager") ;;
  *) echo "e2e-hpa: HPA_E2E_MANAGER is qkcm or upstream" >&2; exit 1 ;;
esac
log "starting $MANAGER (deployment, replicaset, serviceaccount, node-lifecycle, horizontal-pod-autoscaler controllers)"
"${KCM[@]}" --kubeconfig="$CLUSTER_DIR/kubeconfig.yaml" --secure-port=0 --leader-elect=false \
  --controllers=deployment-controller,replicaset-controller,serviceaccount-controller,node-lifecycle-controller,horizontal-pod-autoscaler-controller \
  --node-monitor-period=5s --node-monitor-grace-period=40s \
  --horizontal-pod-autoscaler-sync-period=5s \
  >"$KWOK_WORKDIR/qkcm.log" 2>&1 &
QKCM_PID=$!

wait_for() {
  local what="$1"; shift
  local deadline=$((SECONDS + TIMEOUT))
  until "$@"; do
    if ((SECONDS > deadline)); then
      log "FAIL: timed out waiting for $what"
      kubectl -n hpa-e2e get deploy,hpa,pods -o wide >&2 || true
      kubectl -n hpa-e2e describe hpa web >&2 || true
      tail -n 30 "$KWOK_WORKDIR/qkcm.log" >&2 || true
      exit 1
    fi
    sleep 2
  done
}

log "starting the test metrics API (hack/test-metrics-api/server.py): custom.metrics.k8s.io, external.metrics.k8s.io"
TMA_DIR="$KWOK_WORKDIR/test-metrics-api"
mkdir -p "$TMA_DIR"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost -keyout "$TMA_DIR/tls.key" \
  -out "$TMA_DIR/tls.crt" >/dev/null 2>&1
TMA_PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
set_values() { printf '%s\n' "$1" >"$TMA_DIR/values.json.tmp" && mv -f "$TMA_DIR/values.json.tmp" "$TMA_DIR/values.json"; }
set_values '{}'
: >"$TMA_DIR/requests.log"
python3 "$ROOT/hack/test-metrics-api/server.py" --port "$TMA_PORT" --cert "$TMA_DIR/tls.crt" --key "$TMA_DIR/tls.key" \
  --values "$TMA_DIR/values.json" --log "$TMA_DIR/requests.log" --kubectl "$BIN/kubectl" --kubeconfig "$KUBECONFIG" \
  >"$TMA_DIR/server.log" 2>&1 &
TMA_PID=$!
kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Service
metadata: {name: test-metrics-api, namespace: kube-system}
spec: {type: ExternalName, externalName: localhost}
YAML
for gv in custom.metrics.k8s.io/v1beta2 external.metrics.k8s.io/v1beta1; do
  kubectl apply -f - >/dev/null <<YAML
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: ${gv#*/}.${gv%/*}}
spec:
  group: ${gv%/*}
  version: ${gv#*/}
  groupPriorityMinimum: 100
  versionPriority: 100
  insecureSkipTLSVerify: true
  service: {name: test-metrics-api, namespace: kube-system, port: $TMA_PORT}
YAML
done

kubectl create namespace hpa-e2e >/dev/null
wait_for "the default service account" kubectl -n hpa-e2e get serviceaccount default -o name >/dev/null 2>&1
kubectl -n hpa-e2e apply -f - >/dev/null <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata:
      labels: {app: web}
      annotations: {kwok.x-k8s.io/usage-cpu: 300m}
    spec:
      # kwokctl's nodes are tainted kwok.x-k8s.io/node=fake:NoSchedule
      tolerations: [{key: kwok.x-k8s.io/node, operator: Exists, effect: NoSchedule}]
      containers:
      - {name: web, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: 100m}}}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 1
  maxReplicas: 3
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}
YAML

replicas() { kubectl -n hpa-e2e get deploy web -o jsonpath='{.spec.replicas}'; }
log "waiting for the pods' metrics in metrics.k8s.io and the scale up to 3"
wait_for "metrics-server's pod metrics" sh -c "'$BIN/kubectl' get --raw /apis/metrics.k8s.io/v1beta1/namespaces/hpa-e2e/pods | grep -q '\"cpu\"'"
wait_for "the HPA to scale web to 3" sh -c "[ \"\$('$BIN/kubectl' -n hpa-e2e get deploy web -o jsonpath='{.spec.replicas}')\" = 3 ]"
msg="$(kubectl -n hpa-e2e get events --field-selector reason=SuccessfulRescale -o jsonpath='{.items[*].message}')"
log "event: $msg"
grep -q "New size: 3; reason: cpu resource utilization (percentage of request) above target" <<<"$msg" \
  || { log "FAIL: no SuccessfulRescale event of upstream's text"; exit 1; }
wait_for "the HPA status to report the cpu utilization" sh -c \
  "[ -n \"\$('$BIN/kubectl' -n hpa-e2e get hpa web -o jsonpath='{.status.currentMetrics[0].resource.current.averageUtilization}')\" ]"
util="$(kubectl -n hpa-e2e get hpa web -o jsonpath='{.status.currentMetrics[0].resource.current.averageUtilization}')"
log "status: currentReplicas=$(kubectl -n hpa-e2e get hpa web -o jsonpath='{.status.currentReplicas}') averageUtilization=$util%"
[[ "$util" -ge 250 ]] || { log "FAIL: utilization $util%, expected about 300%"; exit 1; }

hpa_field() { kubectl -n hpa-e2e get hpa web -o jsonpath="$1"; }
condition() { hpa_field "{.status.conditions[?(@.type==\"$1\")].$2}"; }

WINDOW=60
log "a ${WINDOW}s scale-down stabilization window, the usage dropped to 10m: web stays at 3, then goes to 1"
kubectl -n hpa-e2e patch hpa web --type merge \
  -p "{\"spec\":{\"behavior\":{\"scaleDown\":{\"stabilizationWindowSeconds\":$WINDOW}}}}" >/dev/null
dropped=$SECONDS
for p in $(kubectl -n hpa-e2e get pods -l app=web -o name); do
  kubectl -n hpa-e2e annotate --overwrite "$p" kwok.x-k8s.io/usage-cpu=10m >/dev/null
done
stabilized=""
deadline=$((SECONDS + TIMEOUT + WINDOW))
while [[ "$(replicas)" != 1 ]]; do
  if [[ -z "$stabilized" && "$(condition AbleToScale reason)" == ScaleDownStabilized && "$(replicas)" == 3 ]]; then
    stabilized=$((SECONDS - dropped))
    log "AbleToScale ScaleDownStabilized after ${stabilized}s, web still at 3: $(condition AbleToScale message)"
  fi
  if ((SECONDS > deadline)); then
    log "FAIL: timed out waiting for the stabilized scale down"; kubectl -n hpa-e2e describe hpa web >&2 || true; exit 1
  fi
  sleep 1
done
took=$((SECONDS - dropped))
log "scaled down to 1 after ${took}s"
[[ -n "$stabilized" ]] || { log "FAIL: web went to 1 without AbleToScale ScaleDownStabilized while at 3"; exit 1; }
((took >= WINDOW - 15)) || { log "FAIL: scaled down after ${took}s, inside the ${WINDOW}s window"; exit 1; }
msg="$(kubectl -n hpa-e2e get events --field-selector reason=SuccessfulRescale -o jsonpath='{.items[*].message}')"
grep -q "New size: 1; reason: All metrics below target" <<<"$msg" \
  || { log "FAIL: no SuccessfulRescale 'New size: 1; reason: All metrics below target' event: $msg"; exit 1; }

log "custom and external metrics: worker 1 -> 3 (pods metric), 3 -> 4 (external), 4 -> 2 (object)"
set_values '{"pods": {"requests_per_second": "30"}, "object": {"queue_latency": "50"}, "external": {"queue_depth": "0"}}'
kubectl -n hpa-e2e apply -f - >/dev/null <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: worker}
spec:
  replicas: 1
  selector: {matchLabels: {app: worker}}
  template:
    metadata: {labels: {app: worker}}
    spec:
      tolerations: [{key: kwok.x-k8s.io/node, operator: Exists, effect: NoSchedule}]
      containers:
      - {name: worker, image: registry.k8s.io/pause:3.10}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: worker}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: worker}
  minReplicas: 1
  maxReplicas: 4
  behavior: {scaleDown: {stabilizationWindowSeconds: 0}}
  metrics:
  - type: Pods
    pods: {metric: {name: requests_per_second}, target: {type: AverageValue, averageValue: "10"}}
  - type: Object
    object:
      describedObject: {apiVersion: apps/v1, kind: Deployment, name: worker}
      metric: {name: queue_latency}
      target: {type: Value, value: "100"}
  - type: External
    external: {metric: {name: queue_depth}, target: {type: AverageValue, averageValue: "10"}}
YAML
worker() { kubectl -n hpa-e2e get deploy worker -o jsonpath='{.spec.replicas}'; }
rescaled() {
  kubectl -n hpa-e2e get events --field-selector reason=SuccessfulRescale,involvedObject.name=worker \
    -o jsonpath='{range .items[*]}{.message}{"\n"}{end}' | grep -qF "$1"
}
wait_for "worker scaled to 3 on its pods metric" sh -c "[ \"\$('$BIN/kubectl' -n hpa-e2e get deploy worker -o jsonpath='{.spec.replicas}')\" = 3 ]"
wait_for "the event 'New size: 3; reason: pods metric requests_per_second above target'" \
  rescaled "New size: 3; reason: pods metric requests_per_second above target"
set_values '{"pods": {"requests_per_second": "30"}, "object": {"queue_latency": "50"}, "external": {"queue_depth": "40"}}'
wait_for "worker scaled to 4 on its external metric" sh -c "[ \"\$('$BIN/kubectl' -n hpa-e2e get deploy worker -o jsonpath='{.spec.replicas}')\" = 4 ]"
wait_for "the event 'New size: 4; reason: external metric queue_depth(...) above target'" \
  rescaled "New size: 4; reason: external metric queue_depth("
set_values '{"pods": {"requests_per_second": "5"}, "object": {"queue_latency": "50"}, "external": {"queue_depth": "0"}}'
wait_for "worker scaled to 2 on its object metric" sh -c "[ \"\$('$BIN/kubectl' -n hpa-e2e get deploy worker -o jsonpath='{.spec.replicas}')\" = 2 ]"
wait_for "the event 'New size: 2; reason: All metrics below target'" rescaled "New size: 2; reason: All metrics below target"
log "worker's events: $(kubectl -n hpa-e2e get events --field-selector reason=SuccessfulRescale,involvedObject.name=worker \
  -o jsonpath='{range .items[*]}{.message}{"; "}{end}')"
wait_for "worker's status to show the three metrics at 2 replicas" sh -c "[ \"\$('$BIN/kubectl' -n hpa-e2e get hpa worker -o jsonpath='{.status.currentReplicas} {.status.currentMetrics[*].type} {.status.currentMetrics[1].object.current.value}')\" = '2 Pods Object External 50' ]"
log "worker's currentMetrics: $(kubectl -n hpa-e2e get hpa worker -o jsonpath='{.status.currentMetrics}')"

log "the metrics API returns garbage (metrics.k8s.io pointed at hack/test-metrics-api/server.py)"
kubectl patch apiservice v1beta1.metrics.k8s.io --type merge \
  -p "{\"spec\":{\"service\":{\"name\":\"test-metrics-api\",\"namespace\":\"kube-system\",\"port\":$TMA_PORT}}}" >/dev/null
for p in $(kubectl -n hpa-e2e get pods -l app=web -o name); do
  kubectl -n hpa-e2e annotate --overwrite "$p" kwok.x-k8s.io/usage-cpu=300m >/dev/null
done
wait_for "the test metrics API to answer metrics.k8s.io through the API server" sh -c \
  "'$BIN/kubectl' get --raw /apis/metrics.k8s.io/v1beta1/namespaces/hpa-e2e/pods 2>/dev/null | grep -q 'on holiday'"

PREFIX="failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: "
PREVIOUS=""
condition_changed() {
  local m; m="$(condition ScalingActive message)"
  [[ "$m" == "the HPA was unable to compute the replica count: $PREFIX"* && "$m" != "$PREVIOUS" ]]
}
garbage_case() {
  local mode="$1" want="$2"
  set_values "{\"garbage\": \"$mode\"}"
  wait_for "ScalingActive=False FailedGetResourceMetric ($mode)" condition_changed
  PREVIOUS="$(condition ScalingActive message)"
  [[ "$PREVIOUS" == "the HPA was unable to compute the replica count: $want" ]] \
    || { log "FAIL: ScalingActive message is not upstream's 'the HPA was unable to compute the replica count: $want': $PREVIOUS"; exit 1; }
  [[ "$(condition ScalingActive status)" == False && "$(condition ScalingActive reason)" == FailedGetResourceMetric ]] \
    || { log "FAIL: ScalingActive $(condition ScalingActive status) $(condition ScalingActive reason)"; exit 1; }
  local cond; cond="$(condition ScalingActive message)"
  [[ "$cond" == "the HPA was unable to compute the replica count: $PREFIX"* ]] \
    || { log "FAIL: ScalingActive message: $cond"; exit 1; }
  log "$mode: ScalingActive=False FailedGetResourceMetric: $cond"
  # 20 s more: the controller keeps reading once per sync period, web is not scaled on garbage
  local before; before="$(grep -c "/namespaces/hpa-e2e/pods $mode" "$TMA_DIR/requests.log" || true)"
  sleep 20
  local reads=$(( $(grep -c "/namespaces/hpa-e2e/pods $mode" "$TMA_DIR/requests.log" || true) - before ))
  log "$mode: $reads pod-metrics reads in 20 s (sync period 5 s), web at $(replicas)"
  ((reads >= 2 && reads <= 8)) || { log "FAIL: $reads reads in 20 s: not once per sync period"; exit 1; }
  [[ "$(replicas)" == 1 ]] || { log "FAIL: web scaled to $(replicas) on garbage"; exit 1; }
}
# the errors are client-go's (decoding the body as upstream's typed client does)
garbage_case not-json "${PREFIX}couldn't get version/kind; json parse error: invalid character '<' looking for beginning of value"
garbage_case bad-quantity "${PREFIX}quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)\$'"
garbage_case not-a-list "${PREFIX}json: cannot unmarshal string into Go struct field PodMetricsList.items of type []v1beta1.PodMetrics"
events="$(kubectl -n hpa-e2e get events --field-selector reason=FailedGetResourceMetric -o jsonpath='{range .items[*]}{.type} {.count} {.message}{"\n"}{end}')"
log "FailedGetResourceMetric events:"$'\n'"$events"
grep -q "^Warning [0-9]* ${PREFIX}" <<<"$events" || { log "FAIL: no FailedGetResourceMetric Warning event of upstream's text"; exit 1; }
log "PASS: $MANAGER's HPA scaled web 1 -> 3 on CPU usage from metrics-server, back to 1 after the stabilization window, worker 1 -> 3 -> 4 -> 2 on pods, external and object metrics, and held web on a metrics API returning garbage"
