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
# java.se plus what the relays, Kafka's clients (SASL/Kerberos) and jcmd/jfr diagnostics need; no compiler, no tools.
# No jdk.localedata (9 MB of the modules file): the sidecar formats nothing for a locale, and java.base holds the
# English and root locale data it runs with (the image sets no LANG).
"$jdk/bin/jlink" --add-modules java.se,jdk.httpserver,jdk.unsupported,jdk.crypto.ec,jdk.crypto.cryptoki,jdk.naming.dns,jdk.zipfs,jdk.management,jdk.security.auth,jdk.security.jgss,jdk.charsets,jdk.jfr,jdk.attach,jdk.jcmd \
  --strip-debug --no-man-pages --no-header-files --compress=2 --output "$out/opt/java"
# The libraries of the launcher, the VM and the JRE's native libraries; the desktop ones (AWT, fonts, sound) are
# never loaded by a headless server and stay out.
libs=$(for f in "$out"/opt/java/bin/* "$out"/opt/java/lib/server/libjvm.so "$out"/opt/java/lib/*.so; do
  case "$(basename "$f")" in
    libawt*|libfontmanager*|libjsound*|liblcms*|libsplashscreen*|libjawt*|libjavajpeg*|libmlib_image*) continue ;;
  esac
  ldd "$f" 2>/dev/null | grep -o '/[^ ]*\.so[^ ]*' || true
done | grep -v "^$out" | sort -u)
for lib in $libs; do
  mkdir -p "$out$(dirname "$lib")"
  cp -L "$lib" "$out$lib"
done
rm -f "$out"/opt/java/lib/libawt_xawt.so "$out"/opt/java/lib/libsplashscreen.so "$out"/opt/java/lib/libjsound.so
echo "root:x:0:0:root:/root:/sbin/nologin" > "$out/etc/passwd"
echo "outbox:x:65532:65532:outbox:/tmp:/sbin/nologin" >> "$out/etc/passwd"
printf 'root:x:0:\noutbox:x:65532:\n' > "$out/etc/group"
echo "hosts: files dns" > "$out/etc/nsswitch.conf"
