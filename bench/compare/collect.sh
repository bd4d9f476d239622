#!/usr/bin/env bash
# Runs one controller manager ($2) as the local cluster's only controller manager, applies the
# manifests of scenario $SCENARIO and saves the resulting objects and events as
# $OUT/$1.objects.json / $1.events.json. bench/compare/compare.sh runs it for upstream and for qkcm
# and diffs the results. Scenarios:
#   replicasets  a ReplicaSet and a ReplicationController, then the ReplicaSet scaled down
#   services     a Deployment behind a Service, a headless Service with publishNotReadyAddresses and
#                hostnames, a selector-less Service with hand-managed Endpoints; one pod then deleted
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
  *) echo "unknown scenario $SCENARIO" >&2; exit 2 ;;
esac
$K get events -o json > $OUT/$1.events.json
hack/local-cluster.sh down > /dev/null 2>&1
