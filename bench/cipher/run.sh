#!/usr/bin/env bash
# CPU cost per byte of TLS 1.3's two record ciphers in this JVM: AES-128-GCM and ChaCha20-Poly1305, with
# C1 only (bin/qkcm's -XX:TieredStopAtLevel=1) and with C2. Each round encrypts 48 MiB in records of
# each size (default 16384 bytes, TLS's largest; e.g. bench/cipher/run.sh 512 16384) per suite and reports
# thread CPU time; the second round of each is the warm one.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
JAVA="${JAVA:-$(QKCM_PRINT_JAVA=1 "$HERE/../../bin/qkcm")}"
OUT="$(mktemp -d)"
"$(dirname "$(readlink -f "$JAVA")")/javac" -d "$OUT" "$HERE/CipherCost.java"
for size in "${@:-16384}"; do
  echo "== $JAVA, C1 only"
  "$JAVA" -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -cp "$OUT" CipherCost "$size"
  echo "== $JAVA, C1 + C2"
  "$JAVA" -XX:+UseSerialGC -cp "$OUT" CipherCost "$size"
done
rm -rf "$OUT"
