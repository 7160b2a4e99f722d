#!/usr/bin/env bash
# Regenerates the generated sections of the Markdown docs, between their start and end markers, from the option
# definitions (`outbox config-reference`): the sidecar's configuration reference in outbox-cli/README.md (from
# outbox-cli/target/outbox.jar), the options of dev and demo in outbox-dev-tools/README.md (from the dev-tools jar)
# and each relay's option table in relay-poller/README.md and relay-debezium/README.md
# (`outbox config-reference --relay-readme poll|cdc`); GeneratedReferencesTest (outbox-cli) and DevToolsReadmeTest
# fail when a generated section is stale. Then renders every figure marked <!--fig:SOURCE#KEY-->…<!--/fig--> on the
# reference pages from its source (benchmarks/results/latest.json, MetricCatalog's targets; evidence figures are
# only checked) with the benchmarks module's Figures; ReferencePagesTest fails when a figure differs.
# Everything else in the docs is hand-written.
# Run after ./mvnw -B -DskipTests -pl outbox-dev-tools,benchmarks -am package (it needs the jars and classes).
set -euo pipefail
cd "$(dirname "$0")/.."
start='<!-- config-reference:start'
end='<!-- config-reference:end -->'

# regenerate FILE REFERENCE: replaces what stands between the markers of FILE
regenerate() {
  local file=$1 reference=$2
  grep -q "^$start" "$file" && grep -qx "$end" "$file" \
    || { echo "$file lacks the markers '$start ... -->' and '$end' around the reference" >&2; exit 1; }
  # through the environment, not awk -v, which would interpret backslashes in the reference
  REFERENCE=$reference awk -v start="$start" -v end="$end" '
    index($0, start) == 1 { print; print ENVIRON["REFERENCE"]; skip = 1; next }
    $0 == end             { skip = 0 }
    !skip                 { print }
  ' "$file" > "$file.new"
  mv "$file.new" "$file"
  echo "$file: configuration reference regenerated"
}

for built in outbox-cli/target/outbox.jar outbox-dev-tools/target/outbox-dev-tools.jar benchmarks/target/classpath.txt; do
  [ -f "$built" ] || { echo "missing $built: build first with ./mvnw -B -DskipTests -pl outbox-dev-tools,benchmarks -am package" >&2; exit 1; }
done
regenerate outbox-cli/README.md "$(java -jar outbox-cli/target/outbox.jar config-reference)"
regenerate relay-poller/README.md "$(java -jar outbox-cli/target/outbox.jar config-reference --relay-readme poll)"
regenerate relay-debezium/README.md "$(java -jar outbox-cli/target/outbox.jar config-reference --relay-readme cdc)"
regenerate outbox-dev-tools/README.md "$(java -jar outbox-dev-tools/target/outbox-dev-tools.jar config-reference dev demo)"
java -cp "benchmarks/target/classes:$(cat benchmarks/target/classpath.txt)" dev.outboxkit.benchmarks.docs.Figures --write
