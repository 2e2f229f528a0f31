#!/bin/bash
# Busy host, ways to run one build or two: everything pinned to PIN (default 0,1) beside BUSY (default 2) busy
# loops on the same CPUs; per round (ROUNDS, default 3), per mode in MODES and per build in VARIANTS, two
# processes (serve + bench --role initiator) 4 KiB and 64 KiB WRITE (ITERS transfers, default 1000, after a
# tenth as many), and one JVM 16 KiB x 256 unless KV=0; then tcp_pingpong.py beside the same loops. One line
# per run: "round R MODE [VARIANT]: <size xbatch GB/s avg p99; ...>".
# Modes: "threads" (defaults), "caller" (the initiator driven by the bench thread: --progress caller),
# "spin0" (--spin 0 on both), "caller-spin0" (serve --spin 0, initiator --progress caller --spin 0), "io0"
# (--io-threads 0 on both), "io0-caller" (io0 and the initiator --progress caller --spin 0),
# "io0-caller-spin0" (io0-caller with serve --spin 0 too).
#   busy-modes.sh                          (the device machine, in prepare.sh's folder: jre/, lib/)
#   VARIANTS="old new" busy-modes.sh       (in latency-bundle.sh's folder: jre/, lib/, v/old/, v/new/)
cd "$(dirname "$0")"
J=$PWD/jre/bin/java PIN=${PIN:-0,1} ITERS=${ITERS:-1000}
pin=(taskset -c "$PIN")
loops=()
for i in $(seq "${BUSY:-2}"); do "${pin[@]}" sh -c 'while :; do :; done' & loops+=($!); done
trap 'kill ${loops[*]} 2>/dev/null' EXIT
row() { awk '/^(4096|65536|16384) /{printf "%s x%s %s GB/s avg %s us p99 %s us; ", $1, $2, $3, $4, $10}'; }
for round in $(seq "${ROUNDS:-3}"); do
  for mode in ${MODES:-threads io0 io0-caller}; do
    for v in ${VARIANTS:--}; do
      cp="lib/*" name=""
      [ "$v" != - ] && cp="v/$v/*:lib/*" name=" $v"
      s=(); i=()
      case $mode in
        caller) i=(--progress caller) ;;
        spin0) s=(--spin 0); i=(--spin 0) ;;
        caller-spin0) s=(--spin 0); i=(--progress caller --spin 0) ;;
        io0) s=(--io-threads 0); i=(--io-threads 0) ;;
        io0-caller) s=(--io-threads 0); i=(--io-threads 0 --progress caller --spin 0) ;;
        io0-caller-spin0) s=(--io-threads 0 --spin 0); i=(--io-threads 0 --progress caller --spin 0) ;;
      esac
      port=$((7300 + RANDOM % 500))
      "${pin[@]}" $J -cp "$cp" io.tcpx4j.cli.Main serve --listen 127.0.0.1:$port "${s[@]}" > /dev/null 2>&1 &
      sp=$!; sleep 2
      two=$("${pin[@]}" timeout 120 $J -cp "$cp" io.tcpx4j.cli.Main bench --role initiator --peer 127.0.0.1:$port \
          "${i[@]}" --block-sizes 4K,64K --iterations "$ITERS" --warmup $((ITERS / 10)) 2>&1 | row)
      kill $sp; wait $sp 2>/dev/null
      kv=""
      if [ "${KV:-1}" != 0 ]; then
        kv=" one JVM $("${pin[@]}" timeout 120 $J -cp "$cp" io.tcpx4j.cli.Main bench "${i[@]}" --block-sizes 16K \
            --batch-sizes 256 --iterations 60 --warmup 10 2>&1 | row)"
      fi
      echo "round $round $mode$name: two processes $two$kv"
    done
  done
done
"${pin[@]}" python3 tcp_pingpong.py 4096 3000
