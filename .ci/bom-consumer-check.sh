#!/usr/bin/env bash
# A user's build against staged artifacts: a new project with the README's <dependencyManagement>/<dependencies>
# block (the BOM import, outbox-writer, consumer-dedupe), compiled from an EMPTY local repository, with the staging
# directory as its only outboxkit repository (third-party jars come from Maven Central as for any user).
# Usage: .ci/bom-consumer-check.sh VERSION [STAGING_DIR]   (after ./mvnw -Prelease deploy of VERSION)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
version=${1:?usage: .ci/bom-consumer-check.sh VERSION [STAGING_DIR]}
staging=$(cd "${2:-target/staging}" && pwd)

# the README's block, verbatim but for the version
block=$(awk '/^### Depending on outboxkit/{f=1} f && /^```xml/{p=1; next} p && /^```/{exit} p' README.md \
  | sed "s|<version>[^<]*</version>|<version>$version</version>|")
grep -q outboxkit-bom <<<"$block" || { echo "bom-consumer-check: no BOM block in README.md" >&2; exit 1; }

work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src/main/java/demo"
cat >"$work/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>demo</groupId><artifactId>bom-consumer</artifactId><version>1</version>
  <properties><maven.compiler.release>17</maven.compiler.release><project.build.sourceEncoding>UTF-8</project.build.sourceEncoding></properties>
  <repositories><repository><id>outboxkit-staging</id><url>file://$staging</url></repository></repositories>
$block
</project>
EOF
cat >"$work/src/main/java/demo/Use.java" <<'EOF'
package demo;

import dev.outboxkit.consumer.DedupeConsumer;
import dev.outboxkit.writer.OutboxMessage;
import dev.outboxkit.writer.OutboxWriter;

public class Use {
    public static void main(String[] args) {
        OutboxWriter writer = OutboxWriter.builder().schema("public").build();
        OutboxMessage m = OutboxMessage.builder("account", "acc-1", "MoneySent").payloadJson("{}").build();
        System.out.println(writer + " " + m + " " + DedupeConsumer.class.getName());
    }
}
EOF
"$root/mvnw" -B -q -f "$work/pom.xml" -Dmaven.repo.local="$work/m2" compile >"$work/build.log" 2>&1 \
  || { tail -40 "$work/build.log"; echo "bom-consumer-check: the README's block does not build against $staging" >&2; exit 1; }
got=$(find "$work/m2/dev/outboxkit" -name '*.jar' | sed 's|.*/||' | sort | paste -sd' ' -)
echo "bom-consumer-check: OK, built from an empty local repository with $got"
