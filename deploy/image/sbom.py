#!/usr/bin/env python3
"""The image's CycloneDX SBOM: the jars (Maven's SBOM of this module, i.e. outbox-cli and its dependencies, which
Jib puts under /app) plus what image/rootfs.sh added: the jlink'ed JRE and every C library, each named by the
Debian package it came from (with its version) where the build machine is Debian, else by file and SHA-256.
Usage: sbom.py <Maven's SBOM> <rootfs> <JDK home> <image name> <image version> <output>"""
import hashlib
import json
import os
import subprocess
import sys
from urllib.parse import quote


def debian_package(path):
    """(package, version, arch) of the Debian package that installed path, or None."""
    candidates = [os.path.realpath(path), path]
    if path.startswith("/lib"):
        candidates.append("/usr" + path)
    for candidate in candidates:
        try:
            owner = subprocess.run(["dpkg", "-S", candidate], capture_output=True, text=True, check=True).stdout
        except (OSError, subprocess.CalledProcessError):
            continue
        name, _, arch = owner.split(": ", 1)[0].split(", ")[0].partition(":")
        version = subprocess.run(["dpkg-query", "-W", "-f=${Version}", name + (":" + arch if arch else "")],
                                 capture_output=True, text=True).stdout.strip()
        if version:
            return name, version, arch
    return None


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def component(kind, source, file_in_image, description):
    """A component for a file the image holds that came from source on the build machine."""
    package = debian_package(source)
    if package:
        name, version, arch = package
        purl = "pkg:deb/debian/" + name + "@" + quote(version, safe=".+~-_") + ("?arch=" + arch if arch else "")
        return {"type": kind, "bom-ref": purl, "name": name, "version": version, "purl": purl,
                "description": description}
    return {"type": "file", "bom-ref": "file:" + file_in_image, "name": file_in_image,
            "hashes": [{"alg": "SHA-256", "content": sha256(source)}], "description": description}


def main(maven_sbom, rootfs, jdk, image, version, output):
    if not os.path.exists(maven_sbom):
        sys.exit("sbom.py: " + maven_sbom + " is missing: cyclonedx-maven-plugin did not write the jars' SBOM (it skips "
                 "in offline mode, -o); build the image online")
    with open(maven_sbom) as f:
        bom = json.load(f)
    release = {}
    with open(os.path.join(rootfs, "opt/java/release")) as f:
        for line in f:
            key, _, value = line.strip().partition("=")
            release[key] = value.strip('"')
    added = {}
    jre = component("platform", os.path.join(jdk, "lib/server/libjvm.so"), "/opt/java",
                    "the Java runtime under /opt/java, made by jlink from this JDK; modules: " + release.get("MODULES", ""))
    added[jre["bom-ref"]] = jre
    for directory, _, files in os.walk(rootfs):
        for file in sorted(files):
            in_image = "/" + os.path.relpath(os.path.join(directory, file), rootfs)
            if in_image.startswith(("/opt/java", "/etc", "/tmp", "/app")):
                continue
            c = component("library", in_image, in_image, "C library " + in_image + " (the JRE links against it)")
            if c["bom-ref"] in added:
                added[c["bom-ref"]]["description"] += ", " + in_image
            else:
                added[c["bom-ref"]] = c
    bom.setdefault("components", []).extend(added.values())
    jars = bom.get("metadata", {}).get("component")
    # no purl: an OCI purl names the image by its digest, which is known only once the image is built
    image_ref = image + ":" + version
    bom.setdefault("metadata", {})["component"] = {
        "type": "container", "bom-ref": image_ref, "name": image, "version": version,
        "description": "The outboxkit sidecar image: the outbox command, its jars, a jlink'ed JRE and its C libraries"}
    depends_on = [c["bom-ref"] for c in added.values()]
    if jars is not None:
        bom["components"].append(jars)
        depends_on.insert(0, jars["bom-ref"])
    bom.setdefault("dependencies", []).append({"ref": image_ref, "dependsOn": depends_on})
    text = json.dumps(bom, indent=2) + "\n"
    # beside the tarball, and in the image itself (/app/sbom), where a scanner looks for it
    for path in (output, os.path.join(rootfs, "app/sbom", os.path.basename(output))):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)


if __name__ == "__main__":
    if len(sys.argv) != 7:
        sys.exit(__doc__)
    main(*sys.argv[1:])
