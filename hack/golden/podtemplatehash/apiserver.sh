#!/usr/bin/env bash
# Starts a throwaway etcd + kube-apiserver (binaries from hack/install-control-plane.sh) for
# generating golden vectors by hand. Usage: apiserver.sh DIR PORT  -> writes DIR/kubeconfig.
# Stop with: kill $(cat DIR/pids)
set -euo pipefail
dir=$1; port=${2:-16443}
bin=${KUBEAPITEST_BIN:-$HOME/.kubeapitest/k8s/1.34.4-linux-amd64}
mkdir -p "$dir"
echo "golden-token,admin,admin,system:masters" > "$dir/tokens.csv"
openssl genrsa -out "$dir/sa.key" 2048 2>/dev/null
etcdport=$((port+1)); peer=$((port+2))
"$bin/etcd" --data-dir "$dir/etcd" --listen-client-urls http://127.0.0.1:$etcdport \
  --advertise-client-urls http://127.0.0.1:$etcdport --listen-peer-urls http://127.0.0.1:$peer \
  >"$dir/etcd.log" 2>&1 &
echo $! > "$dir/pids"
"$bin/kube-apiserver" --etcd-servers http://127.0.0.1:$etcdport --secure-port $port \
  --bind-address 127.0.0.1 --cert-dir "$dir/certs" --token-auth-file "$dir/tokens.csv" \
  --authorization-mode AlwaysAllow --service-account-key-file "$dir/sa.key" \
  --service-account-signing-key-file "$dir/sa.key" --service-account-issuer https://kubernetes.default.svc \
  --service-cluster-ip-range 10.0.0.0/24 >"$dir/apiserver.log" 2>&1 &
echo $! >> "$dir/pids"
cat > "$dir/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:$port", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: golden-token}}]
contexts: [{name: c, context: {cluster: c, user: u, namespace: default}}]
current-context: c
KC
for i in $(seq 1 60); do
  "$bin/kubectl" --kubeconfig "$dir/kubeconfig" get --raw /readyz >/dev/null 2>&1 && exit 0
  sleep 1
done
echo "apiserver did not become ready" >&2; exit 1
