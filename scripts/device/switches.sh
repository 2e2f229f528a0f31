#!/bin/bash
# What a build's threads cost the kernel on a busy host: per round (ROUNDS, default 2), per busy-loop count in BUSYS
# (default "0 2") and per build in VARIANTS (folders under v/, default "new wake"; each round starts with the next
# one, so no build always runs first), `serve` and `bench --role initiator` pinned to PIN (default 0,1) beside that
# many busy loops on the same CPUs, ITERS 4 KiB WRITEs (default 20000) after 1000. One line per process: its
# context switches (voluntary, involuntary) and CPU-seconds over its whole run (rusage.py), and the bench row
# "size avg p50 p99" in µs. Runs in latency-bundle.sh's folder (jre/, lib/, v/NAME/).
cd "$(dirname "$0")"
J=$PWD/jre/bin/java PIN=${PIN:-0,1} ITERS=${ITERS:-20000}
pin=(taskset -c "$PIN")
vs=(${VARIANTS:-new wake})
for round in $(seq ${ROUNDS:-2}); do for b in ${BUSYS:-0 2}; do
  order=("${vs[@]:round%${#vs[@]}}" "${vs[@]:0:round%${#vs[@]}}")  # each round starts with the next variant
  for v in "${order[@]}"; do
  loops=(); for i in $(seq $b); do "${pin[@]}" sh -c 'while :; do :; done' & loops+=($!); done
  port=$((7300 + RANDOM % 500))
  python3 rusage.py "  serve" "${pin[@]}" $J -cp "v/$v/*:lib/*" io.tcpx4j.cli.Main serve --listen 127.0.0.1:$port > serve.out &
  sp=$!; sleep 2
  python3 rusage.py "round $round busy $b $v initiator" "${pin[@]}" timeout 300 $J -cp "v/$v/*:lib/*" io.tcpx4j.cli.Main bench --role initiator --peer 127.0.0.1:$port \
      ${FLAGS:-} --block-sizes 4K --iterations $ITERS --warmup 1000 --no-baseline
  pkill -f "^$J .*serve --listen 127.0.0.1:$port"; wait $sp; cat serve.out
  kill ${loops[*]} 2>/dev/null; wait ${loops[*]} 2>/dev/null
done; done; done
