#!/usr/bin/env bash
# The image's base, assembled without any registry (only Maven Central is reachable where outboxkit builds): a JRE
# made by jlink from the JDK that runs the build, the C libraries that JRE links against (copied from this machine),
# and a non-root user. Jib adds it to an empty ('scratch') base. Usage: rootfs.sh <JDK home> <output directory>
set -euo pipefail
jdk="$1"
out="$2"
if [ ! -x "$jdk/bin/jlink" ] || [ ! -d "$jdk/jmods" ]; then
  echo "rootfs.sh: $jdk has no jlink or no jmods; build the image with a full JDK (Debian: openjdk-17-jdk and openjdk-17-jmods)" >&2
  exit 2
fi
rm -rf "$out"
mkdir -p "$out/opt" "$out/etc" "$out/tmp"
# java.se without java.desktop (AWT, Swing, sound, java.beans: 9 MB packed with its native libraries) and
# java.datatransfer (used by java.desktop alone), plus what the relays, Kafka's clients (SASL/Kerberos) and jcmd/jfr
# diagnostics need; no compiler, no tools. jdeps finds java.desktop only behind code the sidecar never runs (PGpoint's
# java.awt.Point, Micrometer's Log4j2 binder, an annotation on Debezium's Notification); ImageIT runs both relays on it.
# No jdk.localedata (9 MB of the modules file): the sidecar formats nothing for a locale, and java.base holds the
# English and root locale data it runs with (the image sets no LANG).
# --compress=0: the layer is gzipped as a whole, which packs the modules file 5 MB smaller than jlink's per-resource
# compression does (and the JVM reads classes without inflating them); it costs 22 MB on disk once unpacked.
java_se_headless=java.compiler,java.instrument,java.logging,java.management,java.management.rmi,java.naming,java.net.http,java.prefs,java.rmi,java.scripting,java.security.jgss,java.security.sasl,java.sql,java.sql.rowset,java.transaction.xa,java.xml,java.xml.crypto
"$jdk/bin/jlink" --add-modules $java_se_headless,jdk.httpserver,jdk.unsupported,jdk.crypto.ec,jdk.crypto.cryptoki,jdk.naming.dns,jdk.zipfs,jdk.management,jdk.security.auth,jdk.security.jgss,jdk.charsets,jdk.jfr,jdk.attach,jdk.jcmd \
  --strip-debug --no-man-pages --no-header-files --compress=0 --output "$out/opt/java"
# The C libraries of the launcher, the VM and the JRE's native libraries (none of them a desktop one now).
libs=$(for f in "$out"/opt/java/bin/* "$out"/opt/java/lib/server/libjvm.so "$out"/opt/java/lib/*.so; do
  ldd "$f" 2>/dev/null | grep -o '/[^ ]*\.so[^ ]*' || true
done | grep -v "^$out" | sort -u)
for lib in $libs; do
  mkdir -p "$out$(dirname "$lib")"
  cp -L "$lib" "$out$lib"
done
echo "root:x:0:0:root:/root:/sbin/nologin" > "$out/etc/passwd"
echo "outbox:x:65532:65532:outbox:/tmp:/sbin/nologin" >> "$out/etc/passwd"
printf 'root:x:0:\noutbox:x:65532:\n' > "$out/etc/group"
echo "hosts: files dns" > "$out/etc/nsswitch.conf"
