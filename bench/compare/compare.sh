#!/usr/bin/env bash
# Side by side: the same manifests under upstream kube-controller-manager and under qkcm, each as the
# only controller manager of a fresh local cluster; prints every field that differs after
# normalisation, and the events only one produced.
#   bench/compare/compare.sh [replicasets|services|batch|workloads|nodes|policy|certificates|storage]      (default replicasets; see collect.sh)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
export SCENARIO="${1:-replicasets}"
export OUT="${OUT:-/tmp/qkcm-compare}/$SCENARIO"
BIN="$("$HERE/../../hack/install-control-plane.sh" --print-dir)"
"$HERE/collect.sh" upstream "$BIN/kube-controller-manager"
"$HERE/collect.sh" qkcm "$HERE/../../bin/qkcm"
python3 "$HERE/normalize_diff.py" "$OUT"
