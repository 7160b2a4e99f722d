#!/usr/bin/env bash
# The sidecar before and after, side by side in one run (SidecarCompare.java): jar size and entries, image size,
# classes loaded at ready, start → ready, peak RSS and drain rate of `relay poll` with the sidecar's JVM options,
# then NMT of the after-jar. PostgreSQL 17 and Kafka come from `outbox dev` of the dev-tools jar.
# Usage: benchmarks/sidecar/run.sh BEFORE_JAR AFTER_JAR [ROWS] [BEFORE_IMAGE_TAR AFTER_IMAGE_TAR]
# e.g. git worktree add /tmp/base <commit>; build both with ./mvnw -B -Pimage -pl deploy -am package -DskipTests.
set -euo pipefail
cd "$(dirname "$0")/../.."
before=$1 after=$2 rows=${3:-400000}
devjar=outbox-dev-tools/target/outbox-dev-tools.jar
out=$(mktemp -d)
java -jar "$devjar" dev > "$out/dev.log" 2>&1 &
dev=$!
trap 'kill -TERM $dev; wait $dev || true' EXIT
for _ in $(seq 600); do grep -q OUTBOX_BOOTSTRAP_SERVERS= "$out/dev.log" && break; sleep 0.2; done
eval "$(grep '^export OUTBOX_' "$out/dev.log")"
echo "load at start: $(uptime)"
if [ $# -ge 5 ]; then
  for img in "$4" "$5"; do
    printf 'image %s: %.1f MB (tarball)\n' "$img" "$(echo "$(stat -c %s "$img") / 1000000" | bc -l)"
  done
fi
java -cp "$devjar" benchmarks/sidecar/SidecarCompare.java "$before" "$after" "$rows" "$out/table.md"
echo "load at end: $(uptime)"
