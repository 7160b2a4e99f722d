#!/usr/bin/env bash
# Regenerates the generated sections of the Markdown docs, between their start and end markers, from the option
# definitions (`outbox config-reference`): the sidecar's configuration reference in outbox-cli/README.md (from
# outbox-cli/target/outbox.jar) and the options of dev and demo in outbox-dev-tools/README.md (from the dev-tools jar).
# Then renders every figure marked <!--fig:SOURCE#KEY-->…<!--/fig--> on the reference pages from its source
# (benchmarks/results/latest.json, MetricCatalog's targets; evidence figures are only checked), with the benchmarks
# module's Figures. Everything else in the READMEs is hand-written; ReferencePagesTest fails when a page differs.
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
full=$(java -jar outbox-dev-tools/target/outbox-dev-tools.jar config-reference)
regenerate outbox-dev-tools/README.md "$(echo "$full" | head -n 2; echo "$full" | grep -E '^\| `outbox (dev|demo)[ `]')"
java -cp "benchmarks/target/classes:$(cat benchmarks/target/classpath.txt)" dev.outboxkit.benchmarks.docs.Figures --write
