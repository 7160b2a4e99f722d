#!/usr/bin/env bash
# Regenerates the generated sections of the Markdown docs; today one: the CLI's configuration
# reference in outbox-cli/README.md, between its start and end markers, from the option definitions
# (`outbox config-reference`). Everything else in the READMEs is hand-written.
# Run after ./mvnw -B -DskipTests package (it needs outbox-cli/target/outbox.jar).
set -euo pipefail
cd "$(dirname "$0")/.."
jar=outbox-cli/target/outbox.jar
file=outbox-cli/README.md
[ -f "$jar" ] || { echo "missing $jar: build it first with ./mvnw -B -DskipTests -pl outbox-cli -am package" >&2; exit 1; }
start='<!-- config-reference:start'
end='<!-- config-reference:end -->'
grep -q "^$start" "$file" && grep -qx "$end" "$file" \
  || { echo "$file lacks the markers '$start ... -->' and '$end' around the reference" >&2; exit 1; }
reference=$(java -jar "$jar" config-reference)
# through the environment, not awk -v, which would interpret backslashes in the reference
REFERENCE=$reference awk -v start="$start" -v end="$end" '
  index($0, start) == 1 { print; print ENVIRON["REFERENCE"]; skip = 1; next }
  $0 == end             { skip = 0 }
  !skip                 { print }
' "$file" > "$file.new"
mv "$file.new" "$file"
echo "$file: configuration reference regenerated"
