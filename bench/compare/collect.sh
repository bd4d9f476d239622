#!/usr/bin/env bash
# Runs one controller manager ($2) as the local cluster's only controller manager, applies the
# manifests of scenario $SCENARIO and saves the resulting objects and events as
# $OUT/$1.objects.json / $1.events.json. bench/compare/compare.sh runs it for upstream and for qkcm
# and diffs the results. Scenarios:
#   replicasets  a ReplicaSet and a ReplicationController, then the ReplicaSet scaled down
#   services     a Deployment behind a Service, a headless Service with publishNotReadyAddresses and
#                hostnames, a selector-less Service with hand-managed Endpoints; one pod then deleted
#   batch        examples/batch.yaml (Jobs NonIndexed/Indexed/ttl 0, a CronJob every minute) and a Job
#                created from the CronJob, collected once the CronJob has a successful run
#   workloads    examples/workloads.yaml (a DaemonSet, a StatefulSet) and a StatefulSet with claims;
#                then both rolled to a new image (the StatefulSet with partition 1), and scaled down
set -e
OUT="${OUT:-/tmp/qkcm-compare}"
SCENARIO="${SCENARIO:-replicasets}"
mkdir -p "$OUT"
export QKCM_KUBECONFIG=$OUT/$1.kubeconfig KWOK_WORKDIR=$OUT/kwok QKCM_BINARY=$2
cd "$(dirname "$0")/../.."
hack/local-cluster.sh up --detach > $OUT/$1.up.log 2>&1
K="kubectl --kubeconfig $QKCM_KUBECONFIG"
for i in $(seq 1 60); do $K get sa default >/dev/null 2>&1 && break; $K create sa default >/dev/null 2>&1 || true; sleep 1; done
case "$SCENARIO" in
  replicasets)
    $K apply -f bench/compare/replicaset.yaml -f examples/replication-controller.yaml >/dev/null
    sleep 25
    $K scale rs frontend --replicas=1 >/dev/null
    sleep 15
    $K get rs,rc,pods -o json > $OUT/$1.objects.json
    ;;
  services)
    $K apply -f examples/rolling-update.yaml -f examples/external-service.yaml -f bench/compare/services.yaml >/dev/null 2>&1
    sleep 25
    $K delete pod db-1 --wait=false >/dev/null
    sleep 15
    $K get endpoints,endpointslices -o json > $OUT/$1.objects.json
    ;;
  batch)
    $K apply -f examples/batch.yaml >/dev/null
    $K create job manual --from=cronjob/tick >/dev/null
    # until a scheduled Job (tick-<minute>) has run to the end (at most ~2 minutes), then let it settle
    for i in $(seq 1 150); do
      $K get jobs -o jsonpath='{range .items[*]}{.metadata.name} {.status.succeeded}{"\n"}{end}' 2>/dev/null \
        | grep -q '^tick-[0-9]* 1$' && break
      sleep 1
    done
    sleep 10
    $K get jobs,cronjobs,pods -o json > $OUT/$1.objects.json
    ;;
  workloads)
    $K apply -f examples/workloads.yaml -f bench/compare/workloads.yaml >/dev/null
    $K rollout status daemonset/node-agent --timeout=90s >/dev/null 2>&1 || true
    $K rollout status statefulset/store --timeout=90s >/dev/null 2>&1 || true
    $K patch statefulset store -p '{"spec":{"updateStrategy":{"rollingUpdate":{"partition":1}}}}' >/dev/null
    $K set image statefulset/store nginx=nginx:1.27.3 >/dev/null
    $K set image daemonset/node-agent agent=registry.k8s.io/pause:3.9 >/dev/null
    $K rollout status daemonset/node-agent --timeout=90s >/dev/null 2>&1 || true
    sleep 20
    $K scale statefulset data --replicas=1 >/dev/null
    sleep 10
    $K get daemonsets,statefulsets,controllerrevisions,pods,persistentvolumeclaims -o json > $OUT/$1.objects.json
    ;;
  *) echo "unknown scenario $SCENARIO" >&2; exit 2 ;;
esac
$K get events -o json > $OUT/$1.events.json
cp "$KWOK_WORKDIR/clusters/${QKCM_CLUSTER_NAME:-qkcm}/logs/kube-controller-manager.log" "$OUT/$1.manager.log" 2>/dev/null || true
hack/local-cluster.sh down > /dev/null 2>&1
