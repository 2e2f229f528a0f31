#!/bin/sh
# Builds everything the GPU device runs need into one folder (default .device/run/, git-ignored):
#   jre/     a jlink'ed Java 17 runtime (the device image has no JDK)
#   lib/     the runtime jars of cuda-unpack and integration-tests with all dependencies (test scope
#            too), plus their test classes as tcpx4j-cuda-unpack-tests.jar (GPU tests, UnpackBench)
#            and tcpx4j-it-tests.jar
#   junit-platform-console-standalone-*.jar   the JUnit launcher run.sh uses
#   ptx/     unpack-kernel variants for UnpackBench and the GPU suite (only where nvcc is installed)
#   run.sh, nccl_socket_bench.py, plot_gpu_pair.py, busy-table.sh, busy-modes.sh, tcp_pingpong.py   copied from
#            scripts/device/, and scripts/busy-host.sh
#
#   scripts/device/prepare.sh [DEST]
#
# Run it on the build machine (x86-64 Linux with JDK 17), then hand DEST to the device machine
# (docs/PERFORMANCE.md, "How the figures are made"). PTX_VARIANTS overrides the variant list:
# space-separated name:flags entries, flags for cuda-unpack/src/main/cuda/gen-ptx.sh joined by ','.
#
# A/B builds: VARIANT=name builds the checkout at TREE (default: this one) and puts only its tcpx4j
# jars into DEST/variants/name/ (a few hundred KB; the dependencies, runtime and scripts come from a
# plain prepare.sh into the same DEST). run.sh's `ab` stage runs every variant there, interleaved, and
# its `kv` stage each row once per variant named in KV_VARIANTS.
#
#   scripts/device/prepare.sh DEST                                   # this checkout: lib/, jre/, ...
#   VARIANT=gpu2 scripts/device/prepare.sh DEST                      # this checkout as variant gpu2
#   TREE=/tmp/main-tree VARIANT=main scripts/device/prepare.sh DEST  # another checkout as variant main
set -eu
root=$(cd "${TREE:-$(dirname "$0")/../..}" && pwd)
dest=${1:-$root/.device/run}
junit_version=1.11.4
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
cd "$root"

if [ -n "${VARIANT:-}" ]; then
    ./mvnw -B -q -DskipTests package -pl cuda-unpack,integration-tests -am
    v=$dest/variants/$VARIANT
    rm -rf "$v"
    mkdir -p "$v"
    for m in api domain inject transport-loopback transport-tcpx cuda-unpack cli nixl-backend; do
        cp $m/target/tcpx4j-$m-*.jar "$v/"
    done
    rm -f "$v"/*-sources.jar "$v"/*-javadoc.jar "$v"/tcpx4j-cuda-unpack-*-tests.jar
    jar cf "$v/tcpx4j-cuda-unpack-tests.jar" -C cuda-unpack/target/test-classes .
    jar cf "$v/tcpx4j-it-tests.jar" -C integration-tests/target/test-classes .
    { git rev-parse HEAD && git status --porcelain --untracked-files=no | sed 's/^/dirty: /'; } > "$v/COMMIT" 2>&1 \
        || echo "${VARIANT_COMMIT:-not a git checkout}" > "$v/COMMIT"
    du -sh "$v"
    exit 0
fi

# 1. jars: one reactor build, so copy-dependencies sees this checkout's modules, not ~/.m2's
./mvnw -B -q -DskipTests package dependency:copy-dependencies -DincludeScope=test \
    -DexcludeGroupIds=org.junit.jupiter,org.junit.platform,org.opentest4j,org.apiguardian \
    -pl cuda-unpack,integration-tests -am
rm -rf "$dest/lib"
mkdir -p "$dest/lib"
cp cuda-unpack/target/dependency/*.jar "$dest/lib/"
cp -f integration-tests/target/dependency/*.jar "$dest/lib/"
cp -f cuda-unpack/target/tcpx4j-cuda-unpack-*.jar "$dest/lib/"
# test classes go in once, as the two *-tests.jar below (UnpackBench and GpuTest live there)
rm -f "$dest"/lib/tcpx4j-cuda-unpack-*-tests.jar
# jcuda-natives carries 26 MB of libraries; cuda-unpack loads only the driver API's (1 MB)
natives=$(ls "$dest"/lib/jcuda-natives-*-linux-x86_64.jar)
tmp=$(mktemp -d)
(cd "$tmp" && unzip -q "$natives" -x 'lib/libJNvPTXCompiler*' 'lib/libJCudaRuntime*' 'lib/libJNvrtc*' \
    && rm -f "$natives" && jar cf "${natives%.jar}-driver-only.jar" .)
rm -rf "$tmp"
jar cf "$dest/lib/tcpx4j-cuda-unpack-tests.jar" -C cuda-unpack/target/test-classes .
jar cf "$dest/lib/tcpx4j-it-tests.jar" -C integration-tests/target/test-classes .

# 2. the JUnit console launcher (from the local Maven repository, fetched through the wrapper if absent)
launcher=junit-platform-console-standalone-$junit_version.jar
m2=${MAVEN_REPO:-$HOME/.m2/repository}/org/junit/platform/junit-platform-console-standalone/$junit_version/$launcher
if [ ! -f "$m2" ]; then
    ./mvnw -B -q dependency:get -Dartifact=org.junit.platform:junit-platform-console-standalone:$junit_version
fi
cp "$m2" "$dest/"

# 3. the runtime (kept if it already has every module)
modules=java.base,java.logging,jdk.unsupported,java.management,java.sql,java.naming,java.xml,jdk.zipfs,jdk.httpserver,java.net.http
if ! { [ -x "$dest/jre/bin/java" ] && "$dest/jre/bin/java" --list-modules | grep -q '^java.net.http@'; }; then
    rm -rf "$dest/jre"
    jlink --add-modules $modules --strip-debug --no-header-files --no-man-pages --compress=2 --output "$dest/jre"
fi

# 4. kernel variants (name:flags), for UnpackBench and the GPU suite
rm -rf "$dest/ptx"
if command -v "${NVCC:-nvcc}" > /dev/null 2>&1; then
    mkdir -p "$dest/ptx"
    for v in ${PTX_VARIANTS:-}; do
        name=${v%%:*}
        flags=$(echo "${v#*:}" | tr , ' ')
        # shellcheck disable=SC2086
        sh cuda-unpack/src/main/cuda/gen-ptx.sh "$dest/ptx/$name.ptx" $flags
    done
else
    echo "prepare.sh: no nvcc, no kernel variants" >&2
fi

# 5. the scripts the device runs
cp scripts/device/run.sh scripts/device/nccl_socket_bench.py scripts/device/plot_gpu_pair.py \
    scripts/device/busy-table.sh scripts/device/busy-modes.sh scripts/device/tcp_pingpong.py scripts/busy-host.sh "$dest/"
du -sh "$dest"
