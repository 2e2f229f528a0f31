#!/bin/bash
# Builds the folder the latency A/B (latency.sh) runs from: .device/ab/ (git-ignored) with
#   v/NAME/   this checkout's (or TREE's) tcpx4j jars and test classes, one folder per variant
#   lib/      third-party jars, shared by every variant (LIB=1 refreshes it)
#   jre/      a jlink'ed Java 17 runtime (the device image has no JDK)
# and copies latency.sh, latency-matrix.sh, tcp_pingpong.py, busy-table.sh, spin-matrix.sh, old-new.sh,
# busy-modes.sh, switches.sh, rusage.py and scripts/busy-host.sh beside
# them.
#
#   LIB=1 scripts/device/latency-bundle.sh new             # this checkout as variant "new"
#   TREE=/tmp/old scripts/device/latency-bundle.sh old     # another checkout (git worktree) as "old"
set -euo pipefail
name=$1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tree=$(cd "${TREE:-$root}" && pwd)
dest=$root/.device/ab
mkdir -p "$dest"
cd "$tree"
./mvnw -B -q -DskipTests -Dmaven.javadoc.skip -Dmaven.source.skip package -pl cli,integration-tests -am
./mvnw -B -q -DskipTests -Dmaven.javadoc.skip test-compile -pl domain,integration-tests -am
v=$dest/v/$name
rm -rf "$v"
mkdir -p "$v"
for m in api domain inject transport-loopback transport-tcpx cuda-unpack nixl-backend metrics cli; do
    f=$(ls $m/target/tcpx4j-$m-*.jar 2>/dev/null | grep -v -e sources -e javadoc -e tests | head -1 || true)
    if [ -n "$f" ]; then cp "$f" "$v/"; fi
done
jar cf "$v/domain-tests.jar" -C domain/target/test-classes .
jar cf "$v/it-tests.jar" -C integration-tests/target/test-classes .
git rev-parse HEAD > "$v/COMMIT"
if [ "${LIB:-0}" = 1 ]; then
    rm -rf "$dest/lib"
    mkdir -p "$dest/lib"
    ./mvnw -B -q -DskipTests -Dmaven.javadoc.skip -Dmaven.source.skip package dependency:copy-dependencies \
        -DincludeScope=test -DoutputDirectory="$dest/lib" -pl cli,integration-tests,domain -am
    # what the benches do not load (JUnit, AssertJ, ArchUnit, fuzzing, CUDA natives): the carry limit is 64 MiB
    (cd "$dest/lib" && rm -f tcpx4j-*.jar jcuda-natives-*.jar jazzer*.jar archunit*.jar byte-buddy*.jar \
        assertj*.jar junit-*.jar opentest4j*.jar apiguardian*.jar jmh-generator-annprocess*.jar)
fi
if [ ! -x "$dest/jre/bin/java" ]; then
    jlink --add-modules java.base,java.logging,jdk.unsupported,java.management,java.sql,java.naming,java.xml,jdk.zipfs,jdk.httpserver,java.net.http \
        --strip-debug --no-header-files --no-man-pages --compress=2 --output "$dest/jre"
fi
cp "$here/latency.sh" "$here/latency-matrix.sh" "$here/tcp_pingpong.py" "$here/busy-table.sh" "$here/spin-matrix.sh" "$here/old-new.sh" "$here/busy-modes.sh" \
    "$here/switches.sh" "$here/rusage.py" \
    "$here/../busy-host.sh" "$dest/"
du -sh "$v" "$dest"
