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
#   nodes        bench/compare/nodes.yaml (6 pods tolerating a dead node for 20 s, a Service); then the
#                node running most of them is taken out of kwok's hands (kwok manages the nodes of a
#                label selector in this scenario; the node is labelled out of it): the seconds until it is Unknown, tainted unreachable:NoExecute, its pods out of
#                the Endpoints, deleted, and replaced (6 available elsewhere) go to $1.timings.json; the
#                dead node is named <dead-node> in what is collected
#   policy       bench/compare/policy.yaml (quotas, PDBs, a Deployment of 4), a ConfigMap too many for
#                the quota, then `kubectl drain` of the node running most of the pods (the PDBs allow one
#                disruption at a time): quotas, PDBs, pods and their events; the node is <drained-node>.
#                Before the drain, bench/compare/hpa.yaml's HPA (metrics-server on the cluster) scaled to
#                3 on CPU: the HPA, its Deployment and their events
#   certificates bench/compare/certificates.yaml (bootstrap tokens, cluster-info, an aggregated role) with
#                the cluster's CA as signing key and bootstrapsigner/tokencleaner on; CSRs: a client
#                certificate (approved, then used to authenticate), a kubelet client CSR (auto-approved),
#                a disallowed usage, another signer's; CSRs, cluster-info, token Secrets, `view` and
#                `whoami` with the issued certificate are collected
#   storage      bench/compare/storage.yaml (a static PV and claim, a pod using it, an ephemeral volume, a
#                ResourceClaim from a template); then the claim in use deleted (protected until its pod
#                goes), its pod deleted, the PV deleted: PVs, PVCs, pods, ResourceClaims and their events
set -e
OUT="${OUT:-/tmp/qkcm-compare}"
SCENARIO="${SCENARIO:-replicasets}"
mkdir -p "$OUT"
export QKCM_KUBECONFIG=$OUT/$1.kubeconfig KWOK_WORKDIR=$OUT/kwok QKCM_BINARY=$2
if [[ "$SCENARIO" == certificates ]]; then
  pki="$KWOK_WORKDIR/clusters/${QKCM_CLUSTER_NAME:-qkcm}/pki"
  export QKCM_ARGS="--cluster-signing-cert-file=$pki/ca.crt --cluster-signing-key-file=$pki/ca.key --controllers=*,bootstrapsigner,tokencleaner"
fi
if [[ "$SCENARIO" == policy ]]; then
  export QKCM_METRICS=metrics-server
fi
if [[ "$SCENARIO" == nodes ]]; then
  export QKCM_KWOK_ARGS='--manage-all-nodes=false --manage-nodes-with-label-selector=!qkcm-compare/dead'
fi
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
  nodes)
    $K apply -f bench/compare/nodes.yaml >/dev/null
    $K rollout status deployment/web-n --timeout=120s >/dev/null 2>&1 || true
    sleep 5
    dead=$($K get pods -l app=web-n -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort | uniq -c | sort -k1,1nr -k2 | awk 'NR==1{print $2}')
    t0=$(date +%s.%N)
    # kwok manages the nodes without this label (QKCM_KWOK_ARGS below); labelled, nothing renews the
    # node's Lease or posts its status any more, as when a kubelet dies
    $K label node "$dead" qkcm-compare/dead=true >/dev/null
    declare -A at=()
    for i in $(seq 1 600); do
      now=$(date +%s.%N)
      $K get node "$dead" -o json > $OUT/$1.n.json 2>/dev/null || echo '{}' > $OUT/$1.n.json
      $K get endpoints web-n -o json > $OUT/$1.e.json 2>/dev/null || echo '{}' > $OUT/$1.e.json
      $K get pods -l app=web-n -o json > $OUT/$1.p.json 2>/dev/null || echo '{"items":[]}' > $OUT/$1.p.json
      $K get deployment web-n -o json > $OUT/$1.d.json 2>/dev/null || echo '{}' > $OUT/$1.d.json
      # the steps that hold now: Ready Unknown, the NoExecute unreachable taint, no address of the dead
      # node in the Endpoints, every pod there being deleted, 6 available replicas
      for step in $(python3 - "$OUT/$1" "$dead" <<'PY'
import json, sys
base, dead = sys.argv[1], sys.argv[2]
n, e, p, d = (json.load(open(f"{base}.{x}.json")) for x in "nepd")
if any(c["type"] == "Ready" and c["status"] == "Unknown" for c in n.get("status", {}).get("conditions", [])):
    print("unknown")
if any(t["key"] == "node.kubernetes.io/unreachable" and t["effect"] == "NoExecute" for t in n.get("spec", {}).get("taints", []) or []):
    print("tainted")
if not any(a.get("nodeName") == dead for s in e.get("subsets", []) or [] for a in s.get("addresses", []) or []):
    print("endpoints")
if all(x["metadata"].get("deletionTimestamp") for x in p["items"] if x["spec"].get("nodeName") == dead):
    print("evicted")
if d.get("status", {}).get("availableReplicas") == 6:
    print("available")
PY
); do
        case "$step" in
          unknown|tainted) [[ -z "${at[$step]:-}" ]] && at[$step]=$now ;;
          endpoints) [[ -z "${at[endpoints]:-}" && -n "${at[unknown]:-}" ]] && at[endpoints]=$now ;;
          evicted) [[ -z "${at[evicted]:-}" && -n "${at[tainted]:-}" ]] && at[evicted]=$now ;;
          available) [[ -z "${at[replaced]:-}" && -n "${at[evicted]:-}" ]] && at[replaced]=$now ;;
        esac
      done
      [[ -n "${at[replaced]:-}" ]] && break
      sleep 1
    done
    python3 - "$t0" "$OUT/$1.timings.json" unknown "${at[unknown]:-}" tainted "${at[tainted]:-}" endpoints "${at[endpoints]:-}" evicted "${at[evicted]:-}" replaced "${at[replaced]:-}" <<'PY'
import json, sys
t0, out, rest = float(sys.argv[1]), sys.argv[2], sys.argv[3:]
json.dump({k: (round(float(v) - t0, 1) if v else None) for k, v in zip(rest[::2], rest[1::2])}, open(out, "w"), indent=1)
PY
    sleep 10
    $K get node "$dead" -o json | sed "s/$dead/<dead-node>/g" > $OUT/$1.node.json
    $K get deployments,replicasets,pods,endpoints -o json | sed "s/$dead/<dead-node>/g" > $OUT/$1.objects.json
    $K get events -o json | sed "s/$dead/<dead-node>/g" > $OUT/$1.events.json
    ;;
  policy)
    $K apply -f bench/compare/policy.yaml -f bench/compare/hpa.yaml >/dev/null
    $K rollout status deployment/web-p --timeout=120s >/dev/null 2>&1 || true
    $K rollout status deployment/web-q --timeout=60s >/dev/null 2>&1 || true
    # the HPA: scaled to 3 on the pods' CPU from metrics-server, its status showing all 3; then settled
    for i in $(seq 1 240); do
      [[ "$($K -n autoscale get hpa web-h -o jsonpath='{.status.currentReplicas}/{.status.desiredReplicas}' 2>/dev/null)" == 3/3 ]] && break
      sleep 1
    done
    sleep 20
    $K -n autoscale get horizontalpodautoscalers,deployments -o json > $OUT/$1.hpa.json
    $K -n autoscale get events -o json > $OUT/$1.hpa-events.json
    sleep 10
    for i in 1 2 3 4 5 6; do $K create configmap "cm-$i" --from-literal=k=v >/dev/null 2>&1 || echo "cm-$i refused" >> $OUT/$1.refused; done
    drained=$($K get pods -l "app in (web-p,web-q)" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort | uniq -c | sort -k1,1nr -k2 | awk 'NR==1{print $2}')
    $K drain "$drained" --ignore-daemonsets --delete-emptydir-data --timeout=90s > $OUT/$1.drain.log 2>&1 || echo "drain: exit $?" >> $OUT/$1.drain.log
    sleep 15
    $K get resourcequotas,poddisruptionbudgets,deployments,pods -o json | sed "s/$drained/<drained-node>/g" > $OUT/$1.objects.json
    $K get events -o json | sed "s/$drained/<drained-node>/g" > $OUT/$1.events.json
    ;;
  certificates)
    $K apply -f bench/compare/certificates.yaml >/dev/null
    csr() { # name signer usages CN O [expirationSeconds]
      openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$OUT/$1.$2.key" \
        -subj "/CN=$4${5:+/O=$5}" 2>/dev/null > "$OUT/$1.$2.csr"
      cat <<CSR | $K apply -f - >/dev/null
apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata: {name: $2}
spec:
  signerName: $3
  usages: [$6]
  ${7:+expirationSeconds: $7}
  request: $(base64 -w0 < "$OUT/$1.$2.csr")
CSR
    }
    csr "$1" alice kubernetes.io/kube-apiserver-client alice devs "digital signature, client auth" 3600
    csr "$1" node-csr kubernetes.io/kube-apiserver-client-kubelet system:node:node-x system:nodes "digital signature, client auth"
    csr "$1" bad-usage kubernetes.io/kube-apiserver-client bob "" "server auth"
    csr "$1" other-signer example.com/custom carol "" "client auth"
    $K certificate approve alice bad-usage other-signer >/dev/null
    for i in $(seq 1 60); do
      [[ -n "$($K get csr alice -o jsonpath='{.status.certificate}')" && -n "$($K get csr node-csr -o jsonpath='{.status.certificate}')" ]] && break
      sleep 1
    done
    sleep 10
    $K get csr alice -o jsonpath='{.status.certificate}' | base64 -d > "$OUT/$1.alice.crt" 2>/dev/null || true
    server=$($K config view --minify -o jsonpath='{.clusters[0].cluster.server}')
    kubectl --server "$server" --certificate-authority "$KWOK_WORKDIR/clusters/${QKCM_CLUSTER_NAME:-qkcm}/pki/ca.crt" \
      --client-certificate "$OUT/$1.alice.crt" --client-key "$OUT/$1.alice.key" auth whoami -o json > "$OUT/$1.whoami.json" 2>&1 || true
    { $K get csr -o json; } > $OUT/$1.csr.json
    $K get configmap -n kube-public cluster-info -o json > $OUT/$1.cluster-info.json
    $K get secrets -n kube-system -o json | python3 -c 'import json,sys; l=json.load(sys.stdin); l["items"]=[s for s in l["items"] if s["type"]=="bootstrap.kubernetes.io/token"]; print(json.dumps(l))' > $OUT/$1.tokens.json
    { $K get clusterrole view widgets-view -o json; } > $OUT/$1.objects.json
    $K get events -A -o json > $OUT/$1.events.json
    ;;
  storage)
    $K apply -f bench/compare/storage.yaml >/dev/null
    sleep 20
    $K delete pvc data --wait=false >/dev/null
    sleep 10
    $K get pvc data -o json > $OUT/$1.pvc-in-use.json 2>&1 || true
    $K delete pod uses-data --wait=false >/dev/null
    sleep 15
    $K delete pv pv-static --wait=false >/dev/null
    sleep 10
    $K get pv,pvc,pods,resourceclaims -o json > $OUT/$1.objects.json
    ;;
  *) echo "unknown scenario $SCENARIO" >&2; exit 2 ;;
esac
[[ "$SCENARIO" == nodes || "$SCENARIO" == policy || "$SCENARIO" == certificates ]] || $K get events -o json > $OUT/$1.events.json
cp "$KWOK_WORKDIR/clusters/${QKCM_CLUSTER_NAME:-qkcm}/logs/kube-controller-manager.log" "$OUT/$1.manager.log" 2>/dev/null || true
hack/local-cluster.sh down > /dev/null 2>&1
