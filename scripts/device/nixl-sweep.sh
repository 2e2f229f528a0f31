#!/bin/bash
# Device side of nixl-bundle.sh: NIXL's UCX backend against TCPX through real NIXL agents, DRAM, two processes.
#   busy      tcpx_bench pinned to CPUs 0,1 with 2 busy loops on them: 4 KiB and 1 MiB WRITE and READ, TCPX and
#             UCX alternating, 2 rounds; then TCPX with progress=inline
#   sweep16   nixlbench's default sweep (4 KiB-64 MiB, 100 warm-up, 1000 iterations) plus 16 KiB x 256 and
#             64 KiB x 64, WRITE and READ, for TCPX, TCPX with TCPX4J_NIXL_PROGRESS=inline and UCX (BACKENDS;
#             TCPXdriver adds TCPX4J_NIXL_IO_THREADS=0 to inline; any other name is TCPX with the variables
#             that ENV_<name> lists, e.g. BACKENDS="TCPX pw0 UCX" ENV_pw0="TCPX4J_NIXL_POLL_WAIT=0"); each pair timed for
#             CPU-seconds (user, sys) and wall time
#   sweep2    the same pinned to CPUs 0,1
# Results go to $OUT (one file per stage); BACKENDS, ITERS, WARM, SWEEP_ARGS, BATCH_ARGS narrow a run.
set -u
H=$(cd "$(dirname "$0")" && pwd)
B=/tmp/nixlb
[ -d $B ] || tar -xJf $H/nixlb.tar.xz -C /tmp
export LD_LIBRARY_PATH=$B/lib UCX_MODULE_DIR=$B/lib/ucx NIXL_PLUGIN_DIR=$B/plugins TCPX4J_JAVA_HOME=$B/jre UCX_TLS=tcp,self
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
TB=$B/bin/tcpx_bench NB=$B/bin/nixlbench
PORT=13000
loops() { for i in $(seq 1 $1); do taskset -c 0,1 sh -c 'while :; do :; done' & done; }
stop_loops() { pkill -f 'while :; do :; done' 2>/dev/null; sleep 0.2; }
nb() { # nb PIN LABEL ARGS...  -> one nixlbench pair; its table and cpu-seconds appended to $OUT/$STAGE.txt
  local pin=$1 label=$2; shift 2; PORT=$((PORT+1))
  local A="--runtime_type ASIO --asio_port $PORT $*" L=/tmp/nblogs/$label
  mkdir -p /tmp/nblogs
  TIMEFORMAT="cpu %U user %S sys %R wall"
  { time ( $pin timeout 200 $NB $A > $L.txt 2>&1 & sleep 1.5; $pin timeout 200 $NB $A > $L.tgt.txt 2>&1; wait ) ; } 2>> $L.txt
  { echo "== $label ${ENVS:-}"; grep -A18 '^Block Size' $L.txt | grep -v '^---'; grep -i 'error\|fail' $L.txt $L.tgt.txt | head -3; tail -1 $L.txt; } >> $OUT/$STAGE.txt
  echo "$label: $(tail -1 $L.txt)"
}
for stage in "$@"; do STAGE=$stage; case $stage in
busy)
  for n in 2; do
    loops $n
    taskset -c 0,1 timeout 300 $TB --role target --port 18600 > $OUT/tb-busy$n.tgt.txt 2>&1 &
    tpid=$!; sleep 0.5
    taskset -c 0,1 timeout 300 $TB --port 18600 --backend TCPX,UCX --op WRITE,READ --sizes 4K,1M --batch 1 --iters ${ITERS:-300} --warmup ${WARM:-300} --rounds 2 > $OUT/tb-busy$n.txt 2>&1
    wait $tpid; stop_loops
    cat $OUT/tb-busy$n.txt
    loops $n
    taskset -c 0,1 timeout 200 $TB --role target --port 18601 > $OUT/tb-busy$n-inline.tgt.txt 2>&1 &
    tpid=$!; sleep 0.5
    taskset -c 0,1 timeout 200 $TB --port 18601 --backend TCPX --progress inline --op WRITE,READ --sizes 4K,1M --batch 1 --iters ${ITERS:-300} --warmup ${WARM:-300} --rounds 2 > $OUT/tb-busy$n-inline.txt 2>&1
    wait $tpid; stop_loops
    tail -12 $OUT/tb-busy$n-inline.txt
  done ;;
sweep16|sweep2)
  pin=""; [ $stage = sweep2 ] && pin="taskset -c 0,1"
  for op in WRITE READ; do for be in ${BACKENDS:-TCPX TCPXinline UCX}; do
    b=$be; unset TCPX4J_NIXL_PROGRESS TCPX4J_NIXL_IO_THREADS; ENVS=""
    for v in ${LAST_ENVS:-}; do unset "${v%%=*}"; done; LAST_ENVS=""
    case $be in TCPX|TCPXinline|TCPXdriver|UCX) ;; *) b=TCPX; v=ENV_$be; ENVS=${!v:-}; LAST_ENVS=$ENVS
                                                  for e in $ENVS; do export "$e"; done ;; esac
    [ $be = TCPXinline ] && { b=TCPX; export TCPX4J_NIXL_PROGRESS=inline; ENVS="TCPX4J_NIXL_PROGRESS=inline"; }
    [ $be = TCPXdriver ] && { b=TCPX; export TCPX4J_NIXL_PROGRESS=inline TCPX4J_NIXL_IO_THREADS=0
                              ENVS="TCPX4J_NIXL_PROGRESS=inline TCPX4J_NIXL_IO_THREADS=0"; }
    nb "$pin" $stage-$op-$be-sweep --backend $b --op_type $op ${SWEEP_ARGS:-}
    nb "$pin" $stage-$op-$be-16Kx256 --backend $b --op_type $op --start_block_size 16384 --max_block_size 16384 --start_batch_size 256 --max_batch_size 256 ${BATCH_ARGS:-}
    nb "$pin" $stage-$op-$be-64Kx64 --backend $b --op_type $op --start_block_size 65536 --max_block_size 65536 --start_batch_size 64 --max_batch_size 64 ${BATCH_ARGS:-}
  done; done ;;
esac; done
