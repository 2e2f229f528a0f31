#!/bin/bash
# Builds .device/fleet/ (git-ignored) for fleet.sh on the device machine, from the latency bundle
# (run `LIB=1 scripts/device/latency-bundle.sh new` first): its jre/ and v/new/, its lib/ without the JMH
# jars, JCuda's driver-only natives (for --mem vram), and etcd.xz, Debian's etcd compressed (the device image
# has no etcd; the carry limit is 64 MiB).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
ab=$root/.device/ab
dest=$root/.device/fleet
[ -x "$ab/jre/bin/java" ] || { echo "run scripts/device/latency-bundle.sh first" >&2; exit 2; }
etcd=${ETCD:-$(command -v etcd || echo /usr/bin/etcd)}
[ -x "$etcd" ] || { echo "no etcd binary (apt-get install etcd-server)" >&2; exit 2; }
rm -rf "$dest"
mkdir -p "$dest/v" "$dest/lib"
cp -r "$ab/jre" "$dest/jre"
cp -r "$ab/v/new" "$dest/v/new"
rm -f "$dest/v/new/domain-tests.jar" "$dest/v/new/it-tests.jar"
cp "$ab"/lib/*.jar "$dest/lib/"
rm -f "$dest"/lib/jmh-*.jar "$dest"/lib/commons-math3-*.jar "$dest"/lib/jopt-simple-*.jar
# the driver API's library only, as prepare.sh does
(cd "$root" && ./mvnw -B -q dependency:copy -Dartifact=org.jcuda:jcuda-natives:12.0.0:jar:linux-x86_64 \
    -DoutputDirectory="$dest/lib")
natives=$(ls "$dest"/lib/jcuda-natives-*-linux-x86_64.jar)
tmp=$(mktemp -d)
(cd "$tmp" && unzip -q "$natives" -x 'lib/libJNvPTXCompiler*' 'lib/libJCudaRuntime*' 'lib/libJNvrtc*' \
    && rm -f "$natives" && jar cf "${natives%.jar}-driver-only.jar" .)
rm -rf "$tmp"
xz -T2 -6 -c "$etcd" > "$dest/etcd.xz"
cp "$root/scripts/device/fleet.sh" "$dest/"
du -sh "$dest"
