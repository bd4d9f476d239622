#!/usr/bin/env bash
# CPU per copy of a kwok Node: through the API serialization (a JSON round trip, what DeepCopy.of did for
# types without a builder overload) against fabric8's builder (DeepCopy.of(Node) since ff68010), on one
# thread with bin/qkcm's JDK and JVM options. See CopyBench.java.
#
#   bench/copy/run.sh [OUT_DIR]     needs a build (./mvnw package -DskipTests)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="${1:-$(mktemp -d)}"
mkdir -p "$OUT"
JAVA="$(QKCM_PRINT_JAVA=1 "$ROOT/bin/qkcm")"
# bin/qkcm's options, without the AOT cache (made for the app's main class, not this program)
OPTS="$(QKCM_PRINT_JAVA_OPTS=1 "$ROOT/bin/qkcm" | sed 's/-XX:AOTCache=[^ ]*//')"
CP="$ROOT/app/target/quarkus-app/quarkus-run.jar:$ROOT/app/target/quarkus-app/lib/*"
# shellcheck disable=SC2086
"$JAVA" $OPTS -cp "$CP" "$ROOT/bench/copy/CopyBench.java" 2>/dev/null | tee "$OUT/copy-c1.md"
