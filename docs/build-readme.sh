#!/usr/bin/env bash
# Rebuilds README.md: the hand-written head (up to the marker) plus the sections in docs/readme/,
# with the configuration reference generated from the CLI's option definitions.
# Run after ./mvnw -B -DskipTests package (it needs outbox-cli/target/outbox.jar).
set -euo pipefail
cd "$(dirname "$0")/.."
marker='<!-- Everything below is assembled from docs/readme/ by docs/build-readme.sh; edit those files. -->'
head=$(awk -v m="$marker" '$0 == m {exit} {print}' README.md)
reference=$(java -jar outbox-cli/target/outbox.jar config-reference)
{
  printf '%s\n%s\n\n' "$head" "$marker"
  for section in guarantees outbox-writer relay-poller relay-debezium consumer-dedupe spring-boot outbox-cli reconcile \
                 reliability outbox-testkit-faults performance benchmarks; do
    file="docs/readme/$section.md"
    [ -f "$file" ] || continue
    if [ "$section" = outbox-cli ]; then
      awk -v ref="$reference" '$0 == "CONFIG_REFERENCE_PLACEHOLDER" {print ref; next} {print}' "$file"
    else
      cat "$file"
    fi
    printf '\n'
  done
} > README.md.new
mv README.md.new README.md
echo "README.md rebuilt"
