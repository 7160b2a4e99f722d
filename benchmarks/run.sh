#!/usr/bin/env bash
# outboxkit benchmarks: builds what they need, starts the embedded stack (durable PostgreSQL 17 +
# an in-JVM Kafka broker), runs every scenario and writes benchmarks/results/latest.json,
# latest.md and the PNG charts.
#
#   benchmarks/run.sh            full run: 3 repeats, 200 B and 1 KB payloads
#   benchmarks/run.sh --quick    one repeat, three for the scenarios behind the headline figures, short windows
#   benchmarks/run.sh --quick --only pg_drain_ceiling,kafka_produce_ceiling
#   benchmarks/run.sh --charts-only  no run: draws the PNG charts again from benchmarks/results/latest.json
#   benchmarks/run.sh --mode backlog  a huge backlog drained after an outage, per relay: benchmarks/results/backlog/
#   benchmarks/run.sh --charts-only backlog  its chart again from benchmarks/results/backlog/
#
# MVN_FLAGS adds Maven options (for example MVN_FLAGS=-o to build offline); BENCH_JAVA_OPTS
# replaces the benchmark JVM's options.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck disable=SC2086
./mvnw -B -q ${MVN_FLAGS:-} -pl benchmarks -am package -Dmaven.test.skip=true

classpath="benchmarks/target/classes:$(cat benchmarks/target/classpath.txt)"
if [ "${1:-}" = "--charts-only" ]; then
  exec java -cp "$classpath" dev.outboxkit.benchmarks.internal.ChartsFromJson "benchmarks/results${2:+/$2}"
fi
# shellcheck disable=SC2086
exec java ${BENCH_JAVA_OPTS:--Xms1g -Xmx4g -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:MetaspaceSize=256m} -cp "$classpath" \
  dev.outboxkit.benchmarks.BenchmarkMain --out benchmarks/results "$@"
