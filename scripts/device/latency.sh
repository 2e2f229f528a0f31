#!/bin/bash
# Latency, idle CPU and host-path A/B of tcpx4j builds, run on the device machine from the folder
# latency-bundle.sh made. Variants are the folders under v/ (VARIANTS picks, in that order); a variant
# folder's jvm.opts, if present, holds JVM options for every java that variant runs (e.g. copy v/new to
# v/c1 and write -XX:TieredStopAtLevel=1 there to compare compilers on one build).
#
#   latency.sh STAGE...
#     ab     ROUNDS rounds (default 3) of: every variant's `tcpx4j bench` rows 4 KiB and 64 KiB batch 1
#            (ITERS iterations, default 4000, the first 4 KiB row discarded as JIT warm-up) and 64 KiB x 64,
#            unpinned and pinned to 2 CPUs; then tcp_pingpong.py (4 KiB) unpinned and pinned
#     two    the same rows between two processes (serve + bench --role initiator) per variant
#     idle   every variant's `serve` at once, idle, CPU time from /proc over IDLE_S seconds (default 60), from
#            IDLE_SETTLE seconds (default 15) after the start
#     raw    EngineVsRawBench per variant (RAW_ROUNDS rounds, default 7, after 2 warm-up)
#     jmh    ChunkPathBench.chunk per variant (JMH, 2 forks, 5 warm-up and 8 measured iterations of 1 s)
#     kv     ROUNDS rounds of the KV-cache-shaped rows (16 KiB x 256, 32 KiB x 128, 64 KiB x 64,
#            256 KiB x 16, 1 MiB; WRITE and READ, DRAM, one JVM, the bench's raw column) per variant, per
#            --layout in LAYOUTS (default "adjacent reversed") and per --coalesce-limit in LIMITS (default
#            "0 32K"; 0 sends every descriptor on chunks of its own)
#     busy   a busy host: for each N in BUSY_LOOPS (default "0 2 4"), N busy loops pinned to CPUs 0,1 and
#            every variant's bench pinned there too: 4 KiB and 64 KiB rows (BUSY_ITERS, default 1000) in
#            one JVM and between two processes, the KV row 16 KiB x 256 with its raw column, and
#            tcp_pingpong.py (4 KiB, the blocking-socket baseline) under the same loops; BUSY_FLAGS (e.g.
#            "--progress caller --spin 0") go to every bench command of the stage
#     pinned the default bench rows (4 KiB..64 MiB) and the KV row 16 KiB x 256, pinned to CPUs 0,1 with no busy
#            loops, one JVM and two processes, per variant: to check P99 against avg (scheduler-slice tails)
#     first  the first transfers after start-up, as a NIXL host sees them: for each W in WARM_UPS (default
#            "0 3000"), ROUNDS rounds of serve --warm-up W and bench --role initiator --warm-up W, rows
#            4 KiB and 64 KiB after only 100 warm-up transfers (--warmup-seconds 0), unpinned and pinned
#            to 2 CPUs, each with the seconds from the initiator's start to the end of its run
#     metrics the cost of recording metrics: ROUNDS rounds, ABBA, of serve + bench --role initiator (4 KiB and
#            64 KiB rows, 3000 iterations after 300) with and without --metrics-port 0 on both sides
#     quota  a CPU quota: every variant's bench in a fresh cgroup v2 with cpu.max "200000 100000" (two CPUs'
#            worth) beside one busy loop in the same cgroup; per row avg, P99 and the longest transfer, the
#            same for the raw baseline (blocking sockets in the same JVM and cgroup), and the cgroup's
#            throttling counters; QUOTA_PINS (default "none": unpinned; e.g. "0,1") and QUOTA_SPINS
#            (default "50us") repeat it per CPU list and --spin; BUSY_FLAGS go to the bench too
set -u
cd "$(dirname "$0")"
J=$PWD/jre/bin/java
variants=${VARIANTS:-$(ls v)}
cp_of() { echo "v/$1/*:lib/*"; }
# a variant's JVM options: the words of v/NAME/jvm.opts, if that file exists
jvm_opts() { cat "v/$1/jvm.opts" 2>/dev/null || true; }
log() { echo "== $(date -u +%H:%M:%S) $*"; }
# starts `serve` (extra flags in $2...) under the command prefix $1 and waits until it reports ready; sets sp and port
serve_ready() {
  local pin=$1; shift
  port=$((7200 + RANDOM % 500))
  rm -f serve.out
  $pin $J $(jvm_opts $v) -cp "$(cp_of $v)" io.tcpx4j.cli.Main serve --listen 127.0.0.1:$port "$@" > serve.out 2>&1 &
  sp=$!
  for _ in $(seq 300); do grep -q 'Ctrl-C stops' serve.out 2>/dev/null && return 0; sleep 0.1; done
  echo "serve did not report ready:"; cat serve.out
}
nproc
for stage in "$@"; do case $stage in
ab)
  for round in $(seq "${ROUNDS:-3}"); do for pin in "" "taskset -c 0,1"; do for v in $variants; do
    log "ab $v round $round pin=[$pin]"
    $pin $J $(jvm_opts $v) -cp "$(cp_of $v)" io.tcpx4j.cli.Main bench --block-sizes 4K,4K,64K --iterations "${ITERS:-4000}" \
        --warmup 500 2>&1 | tail -3 | head -2
    $pin $J $(jvm_opts $v) -cp "$(cp_of $v)" io.tcpx4j.cli.Main bench --block-sizes 64K --batch-sizes 64 --iterations 200 \
        --warmup 20 2>&1 | tail -2 | head -1
  done; done; done
  python3 tcp_pingpong.py 4096 5000
  taskset -c 0,1 python3 tcp_pingpong.py 4096 5000 ;;
pinned)
  for v in $variants; do
    log "pinned to 0,1, no busy loops, $v, one JVM"
    taskset -c 0,1 $J $(jvm_opts $v) -cp "$(cp_of $v)" io.tcpx4j.cli.Main bench --format csv 2>/dev/null
    taskset -c 0,1 $J $(jvm_opts $v) -cp "$(cp_of $v)" io.tcpx4j.cli.Main bench --block-sizes 16K --batch-sizes 256 \
        --format csv 2>/dev/null | tail -1
    log "pinned to 0,1, no busy loops, $v, two processes"
    serve_ready "taskset -c 0,1"
    taskset -c 0,1 $J $(jvm_opts $v) -cp "$(cp_of $v)" io.tcpx4j.cli.Main bench --role initiator --peer 127.0.0.1:$port \
        --format csv 2>/dev/null
    taskset -c 0,1 $J $(jvm_opts $v) -cp "$(cp_of $v)" io.tcpx4j.cli.Main bench --role initiator --peer 127.0.0.1:$port \
        --block-sizes 16K --batch-sizes 256 --format csv 2>/dev/null | tail -1
    kill $sp; wait $sp 2>/dev/null
  done ;;
two)
  for v in $variants; do
    log "two processes, $v"
    port=$((7200 + RANDOM % 500))
    $J $(jvm_opts $v) -cp "$(cp_of $v)" io.tcpx4j.cli.Main serve --listen 127.0.0.1:$port > /dev/null 2>&1 &
    sp=$!
    sleep 2
    $J $(jvm_opts $v) -cp "$(cp_of $v)" io.tcpx4j.cli.Main bench --role initiator --peer 127.0.0.1:$port \
        --block-sizes 4K,64K,1M --iterations 2000 --warmup 200 2>&1 | tail -4
    kill $sp; wait $sp 2>/dev/null
  done ;;
idle)
  log "idle serve, CPU over ${IDLE_S:-60} s"
  port=7800; pids=""
  for v in $variants; do
    port=$((port + 1))
    $J $(jvm_opts $v) -cp "$(cp_of $v)" io.tcpx4j.cli.Main serve --listen 127.0.0.1:$port > /dev/null 2>&1 &
    pids="$pids $v:$!"
  done
  sleep "${IDLE_SETTLE:-15}"   # past serve's start-up warm-up
  declare -A t0
  for pv in $pids; do p=${pv#*:}; t0[$p]=$(awk '{print $14+$15}' /proc/$p/stat); done
  sleep "${IDLE_S:-60}"
  hz=$(getconf CLK_TCK)
  for pv in $pids; do
    v=${pv%%:*}; p=${pv#*:}
    d=$(( $(awk '{print $14+$15}' /proc/$p/stat) - t0[$p] ))
    echo "idle serve $v: $d ticks in ${IDLE_S:-60} s = $(awk -v d=$d -v hz=$hz -v s=${IDLE_S:-60} 'BEGIN{printf "%.2f", 100*d/hz/s}') % of a core"
    kill $p
  done ;;
raw)
  for v in $variants; do log "EngineVsRawBench $v"; $J $(jvm_opts $v) -cp "$(cp_of $v)" io.tcpx4j.it.bench.EngineVsRawBench "${RAW_ROUNDS:-7}" 2 2>&1 | grep -E "^(layout|[12]x)"; done ;;
jmh)
  for v in $variants; do log "ChunkPathBench $v"; $J $(jvm_opts $v) -cp "$(cp_of $v)" org.openjdk.jmh.Main 'ChunkPathBench.chunk' -f 2 -wi 5 -i 8 -w 1 -r 1 -prof gc 2>&1 | grep -E "^ChunkPathBench.chunk |alloc.rate.norm"; done ;;
kv)
  for round in $(seq "${ROUNDS:-3}"); do for v in $variants; do for layout in ${LAYOUTS:-adjacent reversed}; do
    for lim in ${LIMITS:-0 32K}; do for op in write read; do
      log "kv $v round $round layout=$layout coalesce=$lim $op"
      for row in "16K 256 150" "32K 128 150" "64K 64 200" "256K 16 300" "1M 1 1000"; do
        read -r bs bn it <<< "$row"
        $J $(jvm_opts $v) -cp "$(cp_of $v)" io.tcpx4j.cli.Main bench --op $op --layout $layout --coalesce-limit $lim \
            --block-sizes $bs --batch-sizes $bn --iterations $it --warmup 30 2>&1 | tail -2 | head -1
      done
    done; done
  done; done; done ;;
busy)
  for n in ${BUSY_LOOPS:-0 2 4}; do
    loops=""
    for i in $(seq 1 "$n"); do taskset -c 0,1 sh -c 'while :; do :; done' & loops="$loops $!"; done
    for v in $variants; do
      log "busy loops $n, $v, one JVM"
      taskset -c 0,1 $J $(jvm_opts $v) -cp "$(cp_of $v)" io.tcpx4j.cli.Main bench --block-sizes 4K,4K,64K \
          --iterations "${BUSY_ITERS:-1000}" --warmup 200 ${BUSY_FLAGS:-} 2>&1 | tail -4 | head -3
      taskset -c 0,1 $J $(jvm_opts $v) -cp "$(cp_of $v)" io.tcpx4j.cli.Main bench --block-sizes 16K --batch-sizes 256 \
          --iterations 100 --warmup 20 ${BUSY_FLAGS:-} 2>&1 | tail -2 | head -1
      log "busy loops $n, $v, two processes"
      serve_ready "taskset -c 0,1"
      taskset -c 0,1 $J $(jvm_opts $v) -cp "$(cp_of $v)" io.tcpx4j.cli.Main bench --role initiator --peer 127.0.0.1:$port \
          --block-sizes 4K,4K,64K --iterations "${BUSY_ITERS:-1000}" --warmup 200 ${BUSY_FLAGS:-} 2>&1 | tail -4 | head -3
      kill $sp; wait $sp 2>/dev/null
    done
    log "busy loops $n, blocking ping-pong"
    taskset -c 0,1 python3 tcp_pingpong.py 4096 5000
    kill $loops 2>/dev/null; wait $loops 2>/dev/null
  done ;;
first)
  for round in $(seq "${ROUNDS:-3}"); do for pin in "" "taskset -c 0,1"; do for w in ${WARM_UPS:-0 3000}; do
    for v in $variants; do
      log "first transfers, warm-up $w, $v, round $round, pin=[$pin]"
      serve_ready "$pin" --warm-up "$w"
      t0=$(date +%s.%N)
      $pin $J $(jvm_opts $v) -cp "$(cp_of $v)" io.tcpx4j.cli.Main bench --role initiator --peer 127.0.0.1:$port --warm-up "$w" \
          --block-sizes 4K,64K --iterations 1000 --warmup 100 --warmup-seconds 0 --no-baseline 2>&1 | tail -3 | head -2
      echo "initiator start to end: $(python3 -c "import time; print(round(time.time() - $t0, 2))") s"
      kill $sp; wait $sp 2>/dev/null
    done
  done; done; done ;;
metrics)
  for round in $(seq "${ROUNDS:-3}"); do
    if [ $((round % 2)) = 1 ]; then order="off on"; else order="on off"; fi
    for m in $order; do for v in $variants; do
      flags=""; [ "$m" = on ] && flags="--metrics-port 0"
      log "metrics $m, $v, round $round"
      serve_ready "" $flags
      $J $(jvm_opts $v) -cp "$(cp_of $v)" io.tcpx4j.cli.Main bench --role initiator --peer 127.0.0.1:$port $flags \
          --block-sizes 4K,64K --iterations 3000 --warmup 300 --no-baseline 2>&1 | tail -3 | head -2
      kill $sp; wait $sp 2>/dev/null
    done; done
  done ;;
quota)
  cg=/sys/fs/cgroup/tcpx4j-quota-$$
  echo +cpu > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
  mkdir "$cg" && echo "200000 100000" > "$cg/cpu.max"
  for pin in ${QUOTA_PINS:-none}; do for spin in ${QUOTA_SPINS:-50us}; do for v in $variants; do
    p=""; [ "$pin" = none ] || p="taskset -c $pin"
    log "quota 2 CPUs + 1 busy loop in the cgroup, $v, spin $spin, pinned to [$pin]"
    before=$(cat "$cg/cpu.stat" | tr '\n' ' ')
    sh -c "echo \$\$ > $cg/cgroup.procs; exec $p sh -c 'while :; do :; done'" & busy=$!
    sh -c "echo \$\$ > $cg/cgroup.procs; exec $p $J $(jvm_opts $v) -cp '$(cp_of $v)' io.tcpx4j.cli.Main bench --block-sizes 4K,64K,1M \
        --iterations ${BUSY_ITERS:-1000} --warmup 200 --spin $spin ${BUSY_FLAGS:-} --json" > quota.json 2> quota.err
    kill $busy; wait $busy 2>/dev/null
    python3 -c 'import json,sys
d=json.load(open("quota.json"))
for r in d["rows"]:
    raw = lambda k: "%.1f" % r[k] if k in r else "-"
    print("%8d B  avg %9.1f us  p99 %9.1f us  max %s us  raw avg %s us, p99 %s us, max %s us" % (r["blockSize"], r["avgLatencyUs"],
          r["p99LatencyUs"], raw("maxLatencyUs"), raw("rawAvgLatencyUs"), raw("rawP99LatencyUs"), raw("rawMaxLatencyUs")))' \
        || tail -5 quota.err
    echo "cpu.stat before: $before"
    echo "cpu.stat after:  $(cat "$cg/cpu.stat" | tr '\n' ' ')"
  done; done; done
  rmdir "$cg" ;;
*) echo "unknown stage $stage" >&2; exit 2 ;;
esac; done
