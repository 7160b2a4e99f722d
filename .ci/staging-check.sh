#!/usr/bin/env bash
# Checks that a staging directory (what ./mvnw -Prelease deploy wrote, default target/staging) has exactly the
# layout of a Maven Central bundle for VERSION: for the parent, the BOM and every artifact the BOM lists,
#   dev/outboxkit/<artifact>/<version>/<artifact>-<version>.pom
#   .jar, -sources.jar, -javadoc.jar (not for the two POM-only artifacts), -cyclonedx.json
# each with .md5 and .sha1 that match the file, and .asc for each when REQUIRE_SIGNATURES=true (a key was set).
# No artifact beside these may be staged (a module that should not be published, a missing skip).
# Usage: .ci/staging-check.sh VERSION [STAGING_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:?usage: .ci/staging-check.sh VERSION [STAGING_DIR]}
staging=${2:-target/staging}
base="$staging/dev/outboxkit"
[ -d "$base" ] || { echo "staging-check: nothing staged under $base" >&2; exit 1; }

arts=$(sed -n 's|.*<artifactId>\([^<]*\)</artifactId><version>${project.version}</version>.*|\1|p' outboxkit-bom/pom.xml)
fail=0
problem() { echo "  $1" >&2; fail=1; }

for a in outboxkit-parent outboxkit-bom $arts; do
  dir="$base/$a/$version"
  files="$a-$version.pom $a-$version-cyclonedx.json"
  case $a in outboxkit-parent|outboxkit-bom) ;; *) files="$files $a-$version.jar $a-$version-sources.jar $a-$version-javadoc.jar" ;; esac
  for f in $files; do
    [ -f "$dir/$f" ] || { problem "missing: $a/$version/$f"; continue; }
    for sum in md5 sha1; do
      if [ ! -f "$dir/$f.$sum" ]; then problem "missing: $a/$version/$f.$sum"
      elif [ "$(tr -d ' \n' <"$dir/$f.$sum")" != "$(${sum}sum "$dir/$f" | cut -d' ' -f1)" ]; then problem "wrong checksum: $a/$version/$f.$sum"; fi
    done
    if [ "${REQUIRE_SIGNATURES:-false}" = true ] && [ ! -f "$dir/$f.asc" ]; then problem "missing signature: $a/$version/$f.asc"; fi
  done
done
for d in "$base"/*/; do
  a=$(basename "$d")
  case " outboxkit-parent outboxkit-bom $(echo $arts) " in *" $a "*) ;; *) problem "staged but not published: $a (set maven.deploy.skip or list it in outboxkit-bom)" ;; esac
done
[ "$fail" = 0 ] || { echo "staging-check: $staging is not a complete Maven Central bundle of $version" >&2; exit 1; }
echo "staging-check: $staging holds a complete bundle of $version: $(find "$base" -type f ! -name 'maven-metadata*' | wc -l) files"
