#!/bin/bash
# One build (v/new of latency-bundle.sh's folder) pinned to CPUs 0,1 beside N busy loops pinned there, for N
# in NS (default "0 2 4") and each driver configuration in CFGS (PROGRESS:SPIN, default the five below):
# 4 KiB, 4 KiB and 64 KiB between two processes; with EMB=1 also 4 KiB and 64 KiB in one JVM and the KV row
# 16 KiB x 256 with its raw column; then tcp_pingpong.py under the same loops. ITERS (default 600).
#   NS="0 2" EMB=1 CFGS="thread:50us caller:0" spin-matrix.sh     (on the device machine, in .device/ab)
cd "$(dirname "$0")"
J=$PWD/jre/bin/java; CP="v/new/*:lib/*"
for n in ${NS:-0 2 4}; do
  loops=""; for i in $(seq 1 "$n"); do taskset -c 0,1 sh -c 'while :; do :; done' & loops="$loops $!"; done
  for cfg in ${CFGS:-thread:50us thread:0 caller:0 caller:50us thread:10us}; do
    prog=${cfg%%:*}; spin=${cfg#*:}
    port=$((7200 + RANDOM % 500))
    taskset -c 0,1 $J -cp "$CP" io.tcpx4j.cli.Main serve --spin $spin --listen 127.0.0.1:$port > /dev/null 2>&1 &
    sp=$!; sleep 1.5
    echo "== busy $n progress $prog spin $spin two-proc"
    taskset -c 0,1 $J -cp "$CP" io.tcpx4j.cli.Main bench --role initiator --peer 127.0.0.1:$port --progress $prog --spin $spin \
        --block-sizes 4K,4K,64K --iterations ${ITERS:-600} --warmup 200 --no-baseline 2>&1 | tail -4 | head -3
    kill $sp; wait $sp 2>/dev/null
    if [ -n "${EMB:-}" ]; then
      echo "== busy $n progress $prog spin $spin one JVM"
      taskset -c 0,1 $J -cp "$CP" io.tcpx4j.cli.Main bench --progress $prog --spin $spin --block-sizes 4K,64K \
          --iterations ${ITERS:-600} --warmup 200 --no-baseline 2>&1 | tail -3 | head -2
      taskset -c 0,1 $J -cp "$CP" io.tcpx4j.cli.Main bench --progress $prog --spin $spin --block-sizes 16K --batch-sizes 256 \
          --iterations 60 --warmup 20 2>&1 | tail -2 | head -1
    fi
  done
  taskset -c 0,1 python3 tcp_pingpong.py 4096 3000
  kill $loops 2>/dev/null; wait $loops 2>/dev/null
done
