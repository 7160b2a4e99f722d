#!/usr/bin/env bash
# Records the API baseline: the main jar of every published artifact (the ones outboxkit-bom lists), built from
# the working tree, into api-baseline/<artifactId>.jar. The release profile's japicmp check (.ci/reproducible.sh,
# so .ci/run; ./mvnw -Prelease deploy) compares the public packages against it and fails on any binary or source
# incompatible change. Run it to accept an intended break (docs/versioning.md), and after each release.
set -euo pipefail
cd "$(dirname "$0")/.."
arts=$(sed -n 's|.*<artifactId>\([^<]*\)</artifactId><version>${project.version}</version>.*|\1|p' outboxkit-bom/pom.xml)
pl=$(printf ':%s,' $arts); pl=${pl%,}
# -DskipTests, not -Dmaven.test.skip: outbox-spring-boot-autoconfigure's tests use outbox-writer's test jar (the
# idempotency outcome suite), which must be built for the reactor to resolve it
./mvnw -B -q -DskipTests package -pl "$pl"
version=$(sed -n '0,/<version>/s|.*<version>\([^<]*\)</version>.*|\1|p' pom.xml)
mkdir -p api-baseline
for pom in */pom.xml; do
  id=$(awk '/<\/parent>/{p=1; next} p && /<artifactId>/{gsub(/.*<artifactId>|<\/artifactId>.*/, ""); print; exit}' "$pom")
  for a in $arts; do
    if [ "$id" = "$a" ]; then
      jar="$(dirname "$pom")/target/$a-$version.jar"
      [ -f "$jar" ] || { echo "api-baseline: missing $jar" >&2; exit 1; }
      cp "$jar" "api-baseline/$a.jar"
    fi
  done
done
echo "api-baseline: recorded $(ls api-baseline/*.jar | wc -l) jars of $version ($(git rev-parse --short HEAD 2>/dev/null || echo '?')) in api-baseline/"
