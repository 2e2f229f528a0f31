#!/bin/bash
# Same-run latency matrix of two builds, run on the device machine from the folder latency-bundle.sh
# made: variant "base" (the build before) and "main". Rows 4, 16 and 64 KiB WRITE batch 1 with the
# bench's raw TCP column: one JVM (all CPUs and pinned to 2), then two processes (serve + initiator),
# main with --inline-limit 0, defaults and --progress caller; two rounds. Then tcp_pingpong.py (4 KiB),
# the KV-cache-shaped rows (16 KiB x 256, 64 KiB x 64, 1 MiB; WRITE and READ) of both builds, and
# main's idle serve CPU over IDLE_S seconds (default 60).
cd "$(dirname "$0")"; J=$PWD/jre/bin/java
cp_of() { echo "v/$1/*:lib/*"; }
log() { echo "== $(date -u +%H:%M:%S) $*"; }
nproc
CFGS=("base|" "main|--progress thread --inline-limit 0" "main|--progress thread" "main|--progress caller")
for round in 1 2; do for pin in "" "taskset -c 0,1"; do
  for cfg in "${CFGS[@]}"; do
    v=${cfg%%|*}; flags=${cfg#*|}
    log "one JVM r$round pin=[$pin] $v $flags"
    $pin $J -cp "$(cp_of $v)" io.tcpx4j.cli.Main bench --block-sizes 4K,4K,16K,64K --iterations 10000 --warmup 3000 $flags 2>&1 | tail -5 | head -4 | tail -3
  done
done; done
for round in 1 2; do
  for cfg in "${CFGS[@]}"; do
    v=${cfg%%|*}; flags=${cfg#*|}
    log "two processes r$round $v $flags"
    port=$((7200 + RANDOM % 500))
    $J -cp "$(cp_of $v)" io.tcpx4j.cli.Main serve --listen 127.0.0.1:$port > /dev/null 2>&1 &
    sp=$!
    sleep 1.5
    $J -cp "$(cp_of $v)" io.tcpx4j.cli.Main bench --role initiator --peer 127.0.0.1:$port \
        --block-sizes 4K,4K,16K,64K --iterations 10000 --warmup 3000 $flags 2>&1 | tail -5 | head -4 | tail -3
    kill $sp; wait $sp 2>/dev/null
  done
done
python3 tcp_pingpong.py 4096 20000
taskset -c 0,1 python3 tcp_pingpong.py 4096 20000
for v in base main; do for op in write read; do
  log "KV rows $v $op"
  $J -cp "$(cp_of $v)" io.tcpx4j.cli.Main bench --op $op --block-sizes 16K --batch-sizes 256 --iterations 100 --warmup 20 2>&1 | tail -2 | head -1
  $J -cp "$(cp_of $v)" io.tcpx4j.cli.Main bench --op $op --block-sizes 64K --batch-sizes 64 --iterations 200 --warmup 20 2>&1 | tail -2 | head -1
  $J -cp "$(cp_of $v)" io.tcpx4j.cli.Main bench --op $op --block-sizes 1M --iterations 1000 --warmup 100 2>&1 | tail -2 | head -1
done; done
VARIANTS="main" IDLE_S=${IDLE_S:-60} ./latency.sh idle
