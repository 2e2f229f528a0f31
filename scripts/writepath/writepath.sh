#!/bin/bash
# writepath.sh — counts, at one or more committed revisions, what one WRITE runs in the domain from the
# initiator's Session.write until the transfer reports DONE (files, methods, pass-throughs, the deepest
# stack), and the domain's fields written from another source file; prints each revision's report and a
# table side by side. scripts/writepath/README.md describes the counts and their rules.
#
#   scripts/writepath/writepath.sh [--out DIR] [--work DIR] [--samples N] [--warm N] [--size B]
#       [--inline-limit B] [--caller-drives] [--maven-args "ARGS"] [REV...]
#
#   REV               a commit, branch or tag (default HEAD); each is exported with git archive (committed
#                     files only) into WORK/<commit> and built there once: inject and transport-loopback
#                     with what they need, tests skipped
#   --out DIR         where each revision's report and lists go, DIR/<commit> (default /tmp/writepath/out)
#   --work DIR        where the revisions are built (default /tmp/writepath/src)
#   --samples N       traced WRITEs per revision (default 5); the report gives the median one and the union
#   --warm N          untraced WRITEs before them (default 200)
#   --size B          bytes per WRITE (default 4096)
#   --inline-limit B  the engines' inlineLimit (default: the revision's default); 0 sends every WRITE in chunks
#   --caller-drives   the loopback transport's callerDrives, where a revision has it (default off)
#   --maven-args ARGS extra Maven arguments, e.g. "-o -Dmaven.repo.local=/path/to/repo"
#
# Needs a JDK 17 (java on the PATH, or JAVA_HOME) with the jdk.jdi and jdk.jdeps modules.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(git -C "$here" rev-parse --show-toplevel)
out=/tmp/writepath/out
work=/tmp/writepath/src
samples=5
warm=200
size=4096
inline=-1
caller=()
maven_args=""
revs=()
while [ $# -gt 0 ]; do
    case "$1" in
        --out) out=$2; shift 2 ;;
        --work) work=$2; shift 2 ;;
        --samples) samples=$2; shift 2 ;;
        --warm) warm=$2; shift 2 ;;
        --size) size=$2; shift 2 ;;
        --inline-limit) inline=$2; shift 2 ;;
        --caller-drives) caller=(--caller-drives); shift ;;
        --maven-args) maven_args=$2; shift 2 ;;
        -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        --*) echo "writepath.sh: unknown option $1" >&2; exit 2 ;;
        *) revs+=("$1"); shift ;;
    esac
done
[ ${#revs[@]} -gt 0 ] || revs=(HEAD)
java=${JAVA_HOME:+$JAVA_HOME/bin/}java

# Exports and builds one commit unless already built; prints its source directory.
build() {
    local sha=$1 src=$work/$1
    if [ ! -f "$src/.writepath-built" ]; then
        rm -rf "$src"
        mkdir -p "$src"
        git -C "$repo" archive "$sha" | tar -x -C "$src"
        # shellcheck disable=SC2086 # maven_args holds several arguments
        (cd "$src" && ./mvnw -B -q $maven_args -pl inject,transport-loopback -am package -DskipTests \
            -Dmaven.javadoc.skip=true -Dmaven.source.skip=true \
            dependency:build-classpath -DincludeScope=runtime -Dmdep.outputFile=target/writepath.classpath) >&2
        touch "$src/.writepath-built"
    fi
    echo "$src"
}

# The driver's class path: the two modules' jars and everything they need at run time.
classpath() {
    local src=$1
    {
        ls "$src"/inject/target/tcpx4j-inject-*.jar "$src"/transport-loopback/target/tcpx4j-transport-loopback-*.jar \
            | grep -v -e '-sources.jar$' -e '-javadoc.jar$'
        tr ':' '\n' < "$src/inject/target/writepath.classpath"
        tr ':' '\n' < "$src/transport-loopback/target/writepath.classpath"
    } | awk 'NF && !seen[$0]++' | paste -sd:
}

shas=()
for rev in "${revs[@]}"; do
    sha=$(git -C "$repo" rev-parse --short=12 "$rev^{commit}")
    shas+=("$sha")
    src=$(build "$sha")
    "$java" --add-modules jdk.jdi,jdk.jdeps --add-exports jdk.jdeps/com.sun.tools.classfile=ALL-UNNAMED \
        "$here/WritePath.java" --classes "$src/domain/target/classes" --classpath "$(classpath "$src")" \
        --driver "$here/WriteDriver.java" --samples "$samples" --warm "$warm" --size "$size" \
        --inline-limit "$inline" "${caller[@]}" --label "$rev ($sha)" --out "$out/$sha"
    echo
done

if [ ${#shas[@]} -gt 1 ]; then
    echo "== side by side (${revs[*]})"
    files=()
    for sha in "${shas[@]}"; do files+=("$out/$sha/summary.properties"); done
    awk -F= 'FNR == 1 { col++ } { if (col == 1) order[++n] = $1; v[$1, col] = $2 }
        END { for (i = 1; i <= n; i++) {
            printf "%-34s", order[i]; for (c = 1; c <= col; c++) printf " %12s", v[order[i], c]; print "" } }' \
        "${files[@]}"
    first=${shas[0]}
    names() { sed 's|.*/||' "$out/$1/files.txt" | sort; }
    for sha in "${shas[@]:1}"; do
        echo "files of the WRITE (by name, package left out) only at $first:"
        comm -23 <(names "$first") <(names "$sha") | paste -sd' ' | fold -s -w 100 | sed 's/ *$//; s/^/  /'
        echo "only at $sha:"
        comm -13 <(names "$first") <(names "$sha") | paste -sd' ' | fold -s -w 100 | sed 's/ *$//; s/^/  /'
    done
fi
