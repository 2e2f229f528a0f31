#!/bin/bash
# Packs what the NIXL comparison on the GPU device host needs into DEST (default .device/nixl/, git-ignored): NIXL and UCX
# as built under /tmp by shared/tools/nixl-stack.sh (with nixlbench taught the name TCPX, see that script's
# header), the plugin directory and tcpx_bench of `tcpx4j nixl install --examples`, a small jlink'ed runtime
# for the plugin's JVM, Debian's toml++ and gflags; then nixl-sweep.sh beside it. Nothing here builds NIXL.
#
#   PKG_CONFIG_PATH=/tmp/nixl-stack/prefix/lib/pkgconfig:/tmp/nixl-stack/pc \
#     ./tcpx4j nixl install --nixl-prefix /tmp/nixl-stack/nixl --plugin-dir /tmp/nixl-plugin --examples
#   scripts/device/nixl-bundle.sh
#   (device) bash .device/nixl/nixl-sweep.sh busy sweep16 sweep2
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
S=${NIXL_STACK:-/tmp/nixl-stack} PLUGIN=${PLUGIN_DIR:-/tmp/nixl-plugin} DEST=${DEST:-$root/.device/nixl}
B=$(mktemp -d)/nixlb
mkdir -p $B/lib/ucx $B/plugins $B/bin
"${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}"/bin/jlink --add-modules \
    java.base,java.logging,jdk.unsupported,java.management,java.naming,java.xml \
    --strip-debug --no-man-pages --no-header-files --compress=2 --output $B/jre
cp -L $S/nixl/lib/x86_64-linux-gnu/*.so $B/lib/
cp -L $S/ucx/lib/libuc[mpst].so.0 $B/lib/
cp -L $S/ucx/lib/ucx/*.so.0 $B/lib/ucx/
cp -L /lib/x86_64-linux-gnu/libtomlplusplus.so.3 /lib/x86_64-linux-gnu/libgflags.so.2.2 $B/lib/
cp -L $S/nixl/lib/x86_64-linux-gnu/plugins/libplugin_UCX.so $B/plugins/
cp -rL $PLUGIN/libplugin_TCPX.so $PLUGIN/libtcpx4j_nixl_bridge.so $PLUGIN/tcpx4j $PLUGIN/tcpx4j-classpath.txt $B/plugins/
cp $S/nixlbench-build/nixlbench "$root"/nixl-backend/target/nixl-plugin-build/tcpx_bench $B/bin/
strip --strip-unneeded $B/lib/*.so* $B/lib/ucx/* $B/plugins/*.so $B/bin/*
mkdir -p "$DEST"
tar -cf - -C "$(dirname $B)" nixlb | xz -6 -T2 > "$DEST"/nixlb.tar.xz
cp "$root"/scripts/device/nixl-sweep.sh "$DEST"/
rm -rf "$(dirname $B)"
du -sh "$DEST"
