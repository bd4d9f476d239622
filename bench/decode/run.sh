#!/usr/bin/env bash
# CPU per pod of JSON (fabric8, tree or one pass) and protobuf decoding of the same pods: see
# DecodeBench.java. Fetches the pods of a running cluster once in each encoding, then decodes them on
# one thread with bin/qkcm's JDK and JVM options (and once more with C2, -XX:-TieredStopAtLevel...).
#
#   bench/decode/run.sh SERVER PKI_DIR [OUT_DIR]   e.g. https://127.0.0.1:32766 ~/.kwok/clusters/bench/pki
#   bench/decode/run.sh - - OUT_DIR                 again, on the pods.json and pods.pb fetched into OUT_DIR before
#
# PKI_DIR holds ca.crt, admin.crt and admin.key (a kwokctl cluster's pki/). Needs a build
# (./mvnw package -DskipTests); downloads client-java-proto and protobuf-java into bench/decode/lib/.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
SERVER="$1"; PKI="$2"; OUT="${3:-$(mktemp -d)}"
mkdir -p "$OUT" "$ROOT/bench/decode/lib"
CENTRAL="${MAVEN_CENTRAL:-https://repo.maven.apache.org/maven2}"
fetch() { # group artifact version
  local f="$ROOT/bench/decode/lib/$2-$3.jar"
  [[ -s "$f" ]] || curl -fsS -o "$f" "$CENTRAL/${1//.//}/$2/$3/$2-$3.jar"
}
# client-java 26 is generated from Kubernetes 1.34's API; protobuf-java at the version it is built with
fetch io.kubernetes client-java-proto 26.0.0
fetch com.google.protobuf protobuf-java 4.34.1

get() { curl -fsS --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" -H "Accept: $1" "$SERVER/api/v1/pods" -o "$2"; }
if [[ "$SERVER" != "-" ]]; then
  get "application/json" "$OUT/pods.json"
  get "application/vnd.kubernetes.protobuf" "$OUT/pods.pb"
fi

JAVA="$(QKCM_PRINT_JAVA=1 "$ROOT/bin/qkcm")"
# bin/qkcm's options, without the AOT cache (made for the app's main class, not this program)
OPTS="$(QKCM_PRINT_JAVA_OPTS=1 "$ROOT/bin/qkcm" | sed 's/-XX:AOTCache=[^ ]*//')"
CP="$ROOT/app/target/quarkus-app/quarkus-run.jar:$ROOT/app/target/quarkus-app/lib/*:$ROOT/bench/decode/lib/*"
# shellcheck disable=SC2086
"$JAVA" $OPTS -Dcom.google.protobuf.use_unsafe_pre22_gencode -cp "$CP" "$ROOT/bench/decode/DecodeBench.java" "$OUT/pods.json" "$OUT/pods.pb" | tee "$OUT/decode-c1.md"
# the same with C2 (the JVM's default tiers)
# shellcheck disable=SC2086
"$JAVA" $(echo "$OPTS" | sed 's/-XX:TieredStopAtLevel=1//') -Dcom.google.protobuf.use_unsafe_pre22_gencode -cp "$CP" "$ROOT/bench/decode/DecodeBench.java" \
  "$OUT/pods.json" "$OUT/pods.pb" | tee "$OUT/decode-c2.md"
