#!/bin/bash
# Busy host, one build, three ways to run it: everything pinned to PIN (default 0,1) beside BUSY (default 2)
# busy loops on the same CPUs; per round (ROUNDS, default 3) and per mode, two processes (serve + bench
# --role initiator) 4 KiB and 64 KiB WRITE, and one JVM 16 KiB x 256; then tcp_pingpong.py beside the same
# loops. Modes: "threads" (defaults), "io0" (--io-threads 0 on both sides), "io0-caller" (--io-threads 0 on
# both sides, the initiator driven by the bench thread with --progress caller --spin 0). One line per run.
#   busy-modes.sh      (run on the device machine from prepare.sh's folder: jre/, lib/, tcp_pingpong.py)
cd "$(dirname "$0")"
J=$PWD/jre/bin/java CP="$PWD/lib/*" PIN=${PIN:-0,1}
pin=(taskset -c "$PIN")
loops=()
for i in $(seq "${BUSY:-2}"); do "${pin[@]}" sh -c 'while :; do :; done' & loops+=($!); done
trap 'kill ${loops[*]} 2>/dev/null' EXIT
row() { awk '/^(4096|65536|16384) /{printf "%s x%s %s GB/s avg %s us p99 %s us; ", $1, $2, $3, $4, $10}'; }
for round in $(seq "${ROUNDS:-3}"); do
  for mode in ${MODES:-threads io0 io0-caller}; do
    s=(); i=()
    case $mode in
      io0) s=(--io-threads 0); i=(--io-threads 0) ;;
      io0-caller) s=(--io-threads 0); i=(--io-threads 0 --progress caller --spin 0) ;;
      spin0) s=(--spin 0); i=(--spin 0) ;;
      caller-spin0) s=(--spin 0); i=(--progress caller --spin 0) ;;
      io0-caller-spin0) s=(--io-threads 0 --spin 0); i=(--io-threads 0 --progress caller --spin 0) ;;
    esac
    port=$((7300 + RANDOM % 500))
    "${pin[@]}" $J -cp "$CP" io.tcpx4j.cli.Main serve --listen 127.0.0.1:$port "${s[@]}" > /dev/null 2>&1 &
    sp=$!; sleep 2
    two=$("${pin[@]}" timeout 120 $J -cp "$CP" io.tcpx4j.cli.Main bench --role initiator --peer 127.0.0.1:$port \
        "${i[@]}" --block-sizes 4K,64K --iterations 1000 --warmup 100 2>&1 | row)
    kill $sp; wait $sp 2>/dev/null
    kv=$("${pin[@]}" timeout 120 $J -cp "$CP" io.tcpx4j.cli.Main bench "${i[@]}" --block-sizes 16K --batch-sizes 256 \
        --iterations 60 --warmup 10 2>&1 | row)
    echo "round $round $mode: two processes $two one JVM $kv"
  done
done
"${pin[@]}" python3 tcp_pingpong.py 4096 3000
