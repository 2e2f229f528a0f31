#!/bin/bash
# The busy-host table, run on the device machine from a bundle (prepare.sh's or latency-bundle.sh's
# folder, which carry this script, busy-host.sh and tcp_pingpong.py beside a jlink'ed jre/): how 4 KiB
# latency, the raw TCP column, the KV-cache row and a blocking ping-pong fare when busy loops share the
# bench's CPUs, and when a CPU quota throttles it.
#
#   busy-table.sh [--short]                        # from the bundle folder
#   BUNDLE=.device/ab scripts/device/busy-table.sh   # from a checkout, with a bundle elsewhere
#
# For each N in BUSY (default "0 2 4"), everything pinned to PIN (default 0,1) with taskset:
#   embedded     tcpx4j bench --block-sizes 4K,64K --busy N                 (one JVM, both engines)
#   two-process  tcpx4j serve, and tcpx4j bench --role initiator --busy N --block-sizes 4K,64K
#   kv           tcpx4j bench --block-sizes 16K --batch-sizes 256 --busy N  (GB/s and x raw)
#   ping-pong    tcp_pingpong.py 4096 beside N busy loops this script starts on the same CPUs
# and one table row per N. Then the quota case, unpinned: for each N in QUOTA_BUSY (default "0 2"),
# busy-host.sh --quota-cpus 2 --busy N (cgroup v2 cpu.max, or v1) around the embedded bench and around
# the ping-pong, with each run's longest transfer against a 20 ms stall limit and the share of
# throttled periods. busy-host.sh needs root; without it (or without a writable cgroup) the quota case
# says why and is skipped.
#
# --short: few iterations, BUSY "0 2", QUOTA_BUSY "2", a 0.2 s warm-up (checks the script's logic).
#
# Output: the table on stdout and in $OUT/busy-table.log (with every command line and the commands'
# stderr); each bench's JSON document and each ping-pong line, one per line with a label, in
# $OUT/busy-runs.jsonl. OUT defaults to this folder.
# Knobs (environment): BUNDLE (the folder with jre/ and lib/ or v/, default this script's), BUSY,
# QUOTA_BUSY (empty: no quota case), PIN, BUDGET_S (default 450: each command runs under timeout with
# what is left of it, at most 300 s, and is skipped once less than 20 s is left, so that the whole script
# ends within about 8 minutes however slow a run is), ITERS (4 KiB and 64 KiB rows, default 1000), KV_ITERS
# (default 100), PP_ITERS (ping-pong round trips, default 3000), JAVA (default: BUNDLE/jre/bin/java, else
# JAVA_HOME's, else java on the PATH), TCPX4J_CP (default: BUNDLE/lib/* where it holds the tcpx4j-cli
# jar (prepare.sh), else BUNDLE/v/VARIANT/*:BUNDLE/lib/* (latency-bundle.sh; VARIANT: the first under
# v/), else the checkout's cli/target/tcpx4j-cli.jar). busy-host.sh and tcp_pingpong.py are looked for
# beside this script, then in BUNDLE, then (busy-host.sh) in the folder above this script.
set -u
here=$(cd "$(dirname "$0")" && pwd)
bundle=$(cd "${BUNDLE:-$here}" && pwd) || { echo "busy-table: no folder ${BUNDLE:-}" >&2; exit 2; }
cd "$bundle"
short=0
[[ ${1:-} == --short ]] && short=1
OUT=${OUT:-$bundle}
mkdir -p "$OUT"
log_file=$OUT/busy-table.log
runs=$OUT/busy-runs.jsonl
log() { echo "== $(date -u +%H:%M:%S) $*" | tee -a "$log_file" >&2; }
fail() { log "busy-table: $*"; exit 2; }

if [[ $short == 1 ]]; then
    BUSY=${BUSY-0 2}; QUOTA_BUSY=${QUOTA_BUSY-2}
    ITERS=${ITERS:-100}; WARMUP=10; KV_ITERS=${KV_ITERS:-10}; KV_WARMUP=2; PP_ITERS=${PP_ITERS:-300}; WS=0.2
else
    BUSY=${BUSY-0 2 4}; QUOTA_BUSY=${QUOTA_BUSY-0 2}
    ITERS=${ITERS:-1000}; WARMUP=100; KV_ITERS=${KV_ITERS:-100}; KV_WARMUP=20; PP_ITERS=${PP_ITERS:-3000}; WS=1
fi
PIN=${PIN:-0,1}
BUDGET_S=${BUDGET_S:-450}

# java: the bundle's runtime first (the device image has no JDK)
J=${JAVA:-}
if [[ -z $J ]]; then
    if [[ -x $bundle/jre/bin/java ]]; then J=$bundle/jre/bin/java
    elif [[ -n ${JAVA_HOME:-} && -x $JAVA_HOME/bin/java ]]; then J=$JAVA_HOME/bin/java
    else J=$(command -v java) || fail "no java: no jre/ here, no JAVA_HOME, none on the PATH (set JAVA)"
    fi
fi
CP=${TCPX4J_CP:-}
if [[ -z $CP ]]; then
    if compgen -G "lib/tcpx4j-cli-*.jar" > /dev/null; then CP="$bundle/lib/*"
    elif [[ -d v ]]; then
        variant=${VARIANT:-$(ls v | head -1)}
        [[ -d v/$variant ]] || fail "no variant v/$variant"
        CP="$bundle/v/$variant/*:$bundle/lib/*"
    elif [[ -f $here/../../cli/target/tcpx4j-cli.jar ]]; then CP=$(cd "$here/../../cli/target" && pwd)/tcpx4j-cli.jar
    else fail "no tcpx4j jars: no lib/tcpx4j-cli-*.jar, no v/, no cli/target/tcpx4j-cli.jar (set TCPX4J_CP)"
    fi
fi
BUSY_HOST=""
for f in "$here/busy-host.sh" "$bundle/busy-host.sh" "$here/../busy-host.sh"; do [[ -f $f ]] && { BUSY_HOST=$f; break; }; done
PINGPONG=""
for f in "$here/tcp_pingpong.py" "$bundle/tcp_pingpong.py"; do [[ -f $f ]] && { PINGPONG=$f; break; }; done
[[ -n $PINGPONG ]] || fail "no tcp_pingpong.py beside this script or in $bundle"
command -v taskset > /dev/null || fail "no taskset"
command -v python3 > /dev/null || fail "no python3"
tcpx4j=("$J" -cp "$CP" io.tcpx4j.cli.Main)
pin=(taskset -c "$PIN")

tmp=$(mktemp -d "${TMPDIR:-/tmp}/busy-table.XXXXXX")
serve_pid=""
loop_pids=()
# the ping-pong's busy loops end by themselves when this script is gone (the check of bench --busy)
spin='while :; do i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; if [ -r /proc/$$/stat ]; then read -r a b c p r < /proc/$$/stat; [ "$p" = "$PPID" ] || exit 0; else kill -0 $PPID 2>/dev/null || exit 0; fi; done'
stop_loops() {
    local p
    for p in "${loop_pids[@]}"; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    loop_pids=()
}
stop_serve() {
    if [[ -n $serve_pid ]]; then
        kill -TERM "$serve_pid" 2>/dev/null
        for _ in $(seq 50); do kill -0 "$serve_pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$serve_pid" 2>/dev/null
        wait "$serve_pid" 2>/dev/null
        serve_pid=""
    fi
}
cleanup() { stop_loops; stop_serve; rm -rf "$tmp"; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# runs "$@" under timeout with what is left of BUDGET_S (at most 300 s), its command line in the log,
# stdout to $1's file, stderr to the log; once less than 20 s is left it skips the command
run() {
    local out=$1; shift
    local left=$((BUDGET_S - (SECONDS - start)))
    (( left > 300 )) && left=300
    if (( left < 20 )); then
        log "skipped (BUDGET_S=$BUDGET_S spent): $*"
        return 1
    fi
    log "run: timeout $left $*"
    timeout "$left" "$@" > "$out" 2>> "$log_file"
    local rc=$?
    [[ $rc == 0 ]] || log "exit $rc: $*"
    return $rc
}
# appends a run's output to busy-runs.jsonl as {"label": ..., "json": ...} or {"label": ..., "line": ...}
keep() {
    python3 - "$1" "$2" >> "$runs" <<'PY'
import json, sys
label, path = sys.argv[1], sys.argv[2]
text = open(path).read().strip()
try:
    print(json.dumps({"label": label, "json": json.loads(text)}))
except ValueError:
    print(json.dumps({"label": label, "line": text}))
PY
}
bench_flags=(--iterations "$ITERS" --warmup "$WARMUP" --warmup-seconds "$WS" --json)

start=$SECONDS
log "busy-table: $(nproc) CPUs, pinned to $PIN, busy loops: $BUSY, quota case: ${QUOTA_BUSY:-none}; java $J; classpath $CP"
"$J" -version 2>&1 | head -1 | tee -a "$log_file" >&2
for n in $BUSY; do
    run "$tmp/emb-$n.json" "${pin[@]}" "${tcpx4j[@]}" bench --block-sizes 4K,64K --busy "$n" "${bench_flags[@]}" \
        && keep "embedded busy=$n" "$tmp/emb-$n.json"

    # two processes: serve picks a free port and prints it; the initiator starts the busy loops
    log "run: ${pin[*]} ${tcpx4j[*]} serve --listen 127.0.0.1:0"
    "${pin[@]}" "${tcpx4j[@]}" serve --listen 127.0.0.1:0 > "$tmp/serve-$n.out" 2>> "$log_file" &
    serve_pid=$!
    addr=""
    for _ in $(seq 300); do
        addr=$(sed -n 's/.* target on \([^ ]*:[0-9]*\) .*/\1/p' "$tmp/serve-$n.out" | head -1)
        [[ -n $addr ]] && break
        kill -0 "$serve_pid" 2>/dev/null || break
        sleep 0.1
    done
    if [[ -n $addr ]]; then
        run "$tmp/two-$n.json" "${pin[@]}" "${tcpx4j[@]}" bench --role initiator --peer "$addr" \
            --block-sizes 4K,64K --busy "$n" "${bench_flags[@]}" && keep "two-process busy=$n" "$tmp/two-$n.json"
    else
        log "serve did not start: $(cat "$tmp/serve-$n.out")"
    fi
    stop_serve

    run "$tmp/kv-$n.json" "${pin[@]}" "${tcpx4j[@]}" bench --block-sizes 16K --batch-sizes 256 --busy "$n" \
        --iterations "$KV_ITERS" --warmup "$KV_WARMUP" --warmup-seconds "$WS" --json && keep "kv busy=$n" "$tmp/kv-$n.json"

    for _ in $(seq "$n"); do "${pin[@]}" sh -c "$spin" & loop_pids+=($!); done
    [[ $n == 0 ]] || log "started $n busy loops on CPUs $PIN: ${loop_pids[*]}"
    run "$tmp/pp-$n.txt" "${pin[@]}" python3 "$PINGPONG" 4096 "$PP_ITERS" \
        && keep "ping-pong busy=$n" "$tmp/pp-$n.txt"
    stop_loops
    log "busy=$n done after $((SECONDS - start)) s"
done

quota_note=""
if [[ -z $BUSY_HOST ]]; then
    quota_note="skipped: no busy-host.sh beside this script, in $bundle or in the folder above"
elif [[ -n $QUOTA_BUSY ]]; then
    for n in $QUOTA_BUSY; do
        run "$tmp/q-$n.json" bash "$BUSY_HOST" --quota-cpus 2 --busy "$n" --move-procs \
            --stats "$tmp/q-$n.stats" -- "${tcpx4j[@]}" bench --block-sizes 4K,64K "${bench_flags[@]}"
        rc=$?
        if [[ $rc == 2 && ! -s $tmp/q-$n.json ]]; then
            quota_note="skipped: $(grep '^busy-host: ' "$log_file" | tail -1)"
            break
        fi
        [[ $rc == 0 ]] && keep "quota busy=$n" "$tmp/q-$n.json"
        run "$tmp/qpp-$n.txt" bash "$BUSY_HOST" --quota-cpus 2 --busy "$n" --move-procs \
            --stats "$tmp/qpp-$n.stats" -- python3 "$PINGPONG" 4096 "$PP_ITERS" \
            && keep "quota ping-pong busy=$n" "$tmp/qpp-$n.txt"
    done
fi
log "all runs done after $((SECONDS - start)) s"

python3 - "$tmp" "$BUSY" "$QUOTA_BUSY" "$PIN" "$quota_note" <<'PY' | tee -a "$log_file"
import json, os, re, sys
tmp, busy, quota_busy, pin, quota_note = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), sys.argv[4], sys.argv[5]

def doc(name):
    try:
        return json.load(open(os.path.join(tmp, name)))
    except (OSError, ValueError):
        return None

def row(d, block, batch=1):
    for r in (d or {}).get("rows", []):
        if r["blockSize"] == block and r["batchSize"] == batch:
            return r
    return None

def pingpong(name):
    try:
        text = open(os.path.join(tmp, name)).read()
    except OSError:
        return None
    m = re.search(r"avg=([0-9.]+) p50=([0-9.]+) p99=([0-9.]+) us max=([0-9.]+)", text)
    return [float(x) for x in m.groups()] if m else None

def stats(name):
    try:
        return dict(l.strip().split("=", 1) for l in open(os.path.join(tmp, name)) if "=" in l)
    except OSError:
        return None

def f(x, fmt="%.1f"):
    return "-" if x is None else fmt % x

def lat(r):
    return "-" if r is None else "%s/%s" % (f(r["avgLatencyUs"]), f(r["p99LatencyUs"]))

def raw(r):
    return "-" if r is None else f(r.get("rawAvgLatencyUs"))

print()
print("Busy loops on CPUs %s (taskset); latencies in us, avg/P99; raw: the bench's raw TCP 4 KiB latency" % pin)
head = ("busy", "emb 4K avg/P99", "emb raw", "2-proc 4K avg/P99", "2-proc raw", "16Kx256 GB/s", "x raw",
        "ping-pong avg/p50/p99")
fmt = "%-5s %-18s %-8s %-18s %-10s %-13s %-6s %s"
print(fmt % head)
for n in busy:
    emb, two, kv = row(doc("emb-%s.json" % n), 4096), row(doc("two-%s.json" % n), 4096), \
        row(doc("kv-%s.json" % n), 16384, 256)
    pp = pingpong("pp-%s.txt" % n)
    print(fmt % (n, lat(emb), raw(emb), lat(two), raw(two), "-" if kv is None else f(kv["gbps"], "%.3f"),
                 "-" if kv is None else f(kv.get("xRaw"), "%.2f"),
                 "-" if pp is None else "%s/%s/%s" % (f(pp[0]), f(pp[1]), f(pp[2]))))

print()
if quota_note:
    print("CPU quota of 2 CPUs: " + quota_note)
elif quota_busy:
    print("CPU quota of 2 CPUs (busy-host.sh, unpinned); latencies in us; a stall is a transfer or round trip over 20 ms")
    fmt = "%-5s %-18s %-10s %-10s %-22s %-10s %-10s %s"
    print(fmt % ("busy", "emb 4K avg/P99", "4K max", "64K max", "ping-pong avg/p99/max", "throttled", "stall", "cgroup"))
    for n in quota_busy:
        d = doc("q-%s.json" % n)
        r4, r64 = row(d, 4096), row(d, 65536)
        pp = pingpong("qpp-%s.txt" % n)
        s = stats("q-%s.stats" % n)
        maxes = [x for x in ((r4 or {}).get("maxLatencyUs"), (r64 or {}).get("maxLatencyUs"),
                             pp[3] if pp else None) if x is not None]
        thr = "-"
        if s and int(s.get("nr_periods", "0") or 0) > 0:
            thr = "%.1f%%" % (100.0 * int(s["nr_throttled"]) / int(s["nr_periods"]))
        stall = "-" if not maxes else ("YES %.1f ms" % (max(maxes) / 1e3) if max(maxes) > 20000 else "no")
        print(fmt % (n, lat(r4), f((r4 or {}).get("maxLatencyUs")), f((r64 or {}).get("maxLatencyUs")),
                     "-" if pp is None else "%s/%s/%s" % (f(pp[0]), f(pp[2]), f(pp[3])), thr, stall,
                     "v%s" % s["version"] if s else "-"))
PY
if grep -q "skipped (BUDGET_S" "$log_file"; then
    echo "Some runs were skipped: BUDGET_S=$BUDGET_S s was spent (see $log_file)" | tee -a "$log_file"
fi
