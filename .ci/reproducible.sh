#!/usr/bin/env bash
# Reproducible builds: builds every published artifact twice from clean (-Prelease, tests compiled, not run: jars, sources,
# Javadoc with doclint, CycloneDX SBOMs, the BOM) and compares the SHA-256 of each. Exits 1 naming every file that
# differs between the two builds (or exists in only one). The published artifacts are the ones outboxkit-bom lists.
# Also fails when a Javadoc of a public package has an error or a warning (the release profile's doclint), and
# when a public package breaks its API against api-baseline/ (japicmp, docs/versioning.md#the-api-check).
# Usage: .ci/reproducible.sh   (from anywhere; about 4 min on 2 cores: two builds of 2 min). .ci/run runs it.
set -euo pipefail
cd "$(dirname "$0")/.."

arts=$(sed -n 's|.*<artifactId>\([^<]*\)</artifactId><version>${project.version}</version>.*|\1|p' outboxkit-bom/pom.xml)
[ -n "$arts" ] || { echo "reproducible: no artifacts listed in outboxkit-bom/pom.xml" >&2; exit 2; }
pl=$(printf ':%s,' $arts outboxkit-bom); pl=${pl%,}

# module directory of each published artifact (its own <artifactId>, the one after </parent>)
dirs=""
for pom in pom.xml */pom.xml; do
  id=$(awk '/<\/parent>/{p=1; next} p && /<artifactId>/{gsub(/.*<artifactId>|<\/artifactId>.*/, ""); print; exit}' "$pom")
  for a in $arts outboxkit-bom; do [ "$id" = "$a" ] && dirs="$dirs $(dirname "$pom")"; done
done

out=target/reproducible; rm -rf "$out"; mkdir -p "$out"
for run in 1 2; do
  echo "reproducible: build $run of 2 ($(date -u +%T))"
  # -DskipTests, not -Dmaven.test.skip: outbox-writer's test jar (the idempotency outcome suite) is a test dependency
  # of outbox-spring-boot-autoconfigure and must be built for the reactor to resolve it
  if ! ./mvnw -B -q -Prelease -DskipTests clean package -pl "$pl" >"$out/build-$run.log" 2>&1; then
    tail -n 60 "$out/build-$run.log"; echo "reproducible: build $run failed (log: $out/build-$run.log)" >&2; exit 1
  fi
  for d in $dirs; do
    find "$d/target" -maxdepth 1 -type f \( -name '*.jar' -o -name '*-cyclonedx.json' -o -name '*.pom' \) \
      ! -name 'original-*' -print0 | xargs -0 -r sha256sum
  done | sort -k2 >"$out/sha256-$run.txt"
done

n=$(wc -l <"$out/sha256-1.txt")
differ=$(join -1 2 -2 2 -a 1 -a 2 -e missing -o 0,1.1,2.1 "$out/sha256-1.txt" "$out/sha256-2.txt" | awk '$2 != $3 {print $1}')
if [ -n "$differ" ]; then
  echo "reproducible: FAILED, these files differ between two builds of the same commit:" >&2
  echo "$differ" | sed 's/^/  /' >&2
  exit 1
fi
echo "reproducible: OK, $n files identical in two builds (SHA-256 in $out/sha256-1.txt)"
