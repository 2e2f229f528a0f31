#!/bin/bash
# busy-host.sh — runs a command inside a CPU quota, as in a pod with a CPU limit, optionally beside busy
# co-tenants that share the quota, and prints how often the quota throttled the group.
#
#   scripts/busy-host.sh [--quota-cpus C] [--period-us P] [--busy N] [--move-procs] [--stats FILE] \
#       [--] COMMAND [ARG...]
#
#   --quota-cpus C   CPUs' worth of time per period, a decimal (2 -> quota 200000 us per 100000 us period;
#                    0.5 -> 50000). Default 2.
#   --period-us P    the period in microseconds, 1000..1000000. Default 100000 (the kernel's default).
#   --busy N         N co-tenants in the same cgroup, each a shell spinning in a loop (0..256). Default 0.
#   --move-procs     cgroup v2 only: when the cpu controller cannot be enabled for children of the root
#                    cgroup because processes live in it (a container's own cgroup namespace), move them
#                    into a leaf cgroup busy-host-init first, and back when done.
#   --stats FILE     also write the throttling figures to FILE as key=value lines (version, cgroup,
#                    quota_us, period_us, busy, nr_periods, nr_throttled, throttled_us, usage_us, exit).
#
# Needs root (it writes under /sys/fs/cgroup). It creates a fresh cgroup, busy-host.PID, directly under the
# cgroup root: on cgroup v2 (/sys/fs/cgroup/cgroup.controllers exists) with cpu.max "QUOTA PERIOD", on v1
# under the cpu controller's mount (/sys/fs/cgroup/cpu or cpu,cpuacct) with cpu.cfs_period_us and
# cpu.cfs_quota_us. The co-tenants start first, then COMMAND; each moves itself into the cgroup before it
# execs, so COMMAND and its children run under the quota from their first instruction.
#
# On every way out (COMMAND ends, this script fails, SIGINT, SIGTERM, SIGHUP) it kills the co-tenants,
# sends SIGTERM to COMMAND if it still runs (SIGKILL 10 s later), kills whatever is still in the cgroup,
# prints the cgroup's cpu.stat as one line on stderr (v2: nr_periods, nr_throttled, throttled_usec; v1:
# nr_periods, nr_throttled, throttled_time in ns), e.g.
#   busy-host: cgroup v2, quota 2 CPUs (200000/100000 us), 2 busy co-tenants: N periods, throttled in T (P%), S s throttled, U s CPU
# and removes the cgroup. Exit code: COMMAND's; 2 for bad arguments or when no cgroup can be made here (one
# line on stderr saying why).
set -uo pipefail

me=busy-host
die() { echo "$me: $*" >&2; exit 2; }

quota_cpus=2
period=100000
busy=0
move_procs=0
stats_file=""
while [[ $# -gt 0 ]]; do
    case $1 in
        --quota-cpus) [[ $# -ge 2 ]] || die "--quota-cpus needs a value"; quota_cpus=$2; shift 2 ;;
        --period-us) [[ $# -ge 2 ]] || die "--period-us needs a value"; period=$2; shift 2 ;;
        --busy) [[ $# -ge 2 ]] || die "--busy needs a value"; busy=$2; shift 2 ;;
        --move-procs) move_procs=1; shift ;;
        --stats) [[ $# -ge 2 ]] || die "--stats needs a file"; stats_file=$2; shift 2 ;;
        -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        --) shift; break ;;
        -*) die "unknown option $1 (see --help)" ;;
        *) break ;;
    esac
done
[[ $# -ge 1 ]] || die "no command given (see --help)"
[[ $quota_cpus =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--quota-cpus must be a positive number, was '$quota_cpus'"
[[ $period =~ ^[0-9]+$ ]] && (( period >= 1000 && period <= 1000000 )) \
    || die "--period-us must be 1000..1000000, was '$period'"
[[ $busy =~ ^[0-9]+$ ]] && (( busy <= 256 )) || die "--busy must be 0..256, was '$busy'"
quota=$(awk -v c="$quota_cpus" -v p="$period" 'BEGIN { printf "%d", c * p + 0.5 }')
(( quota >= 1000 )) || die "--quota-cpus $quota_cpus x --period-us $period is under the kernel's 1000 us minimum"

root=/sys/fs/cgroup
if [[ -f $root/cgroup.controllers ]]; then
    version=2
    base=$root
elif [[ -f $root/cpu/cpu.cfs_quota_us ]]; then
    version=1
    base=$root/cpu
elif [[ -f $root/cpu,cpuacct/cpu.cfs_quota_us ]]; then
    version=1
    base=$root/cpu,cpuacct
else
    die "cannot find a cgroup v2 hierarchy or a v1 cpu controller under $root"
fi
[[ -w $base ]] || die "cannot create a cgroup under $base: not writable (run as root; a container needs a writable /sys/fs/cgroup)"

cg=""              # the cgroup made here
init_leaf=""       # v2 --move-procs: where the root's processes went
enabled_cpu=0      # v2: this script enabled +cpu in the root's subtree_control
busy_pids=()
cmd_pid=""
rc=0
cleaned=0

# v2: the cpu controller must be enabled in the parent's cgroup.subtree_control
enable_cpu_v2() {
    grep -qw cpu "$base/cgroup.subtree_control" && return 0
    grep -qw cpu "$base/cgroup.controllers" || die "the cpu controller is not available in $base (cgroup.controllers: $(cat "$base/cgroup.controllers"))"
    if echo +cpu 2>/dev/null > "$base/cgroup.subtree_control"; then
        enabled_cpu=1
        return 0
    fi
    [[ $move_procs == 1 ]] || die "cannot enable the cpu controller in $base/cgroup.subtree_control (processes live in $base, as in a container's cgroup namespace); --move-procs moves them into a leaf first"
    init_leaf=$base/$me-init
    mkdir -p "$init_leaf" || die "cannot create $init_leaf"
    local p
    # kernel threads cannot move and stay; a pass moves what the last one missed (processes forked meanwhile)
    for _ in 1 2 3; do
        while read -r p; do echo "$p" 2>/dev/null > "$init_leaf/cgroup.procs"; done < "$base/cgroup.procs"
    done
    echo +cpu 2>/dev/null > "$base/cgroup.subtree_control" \
        || die "cannot enable the cpu controller in $base even after moving its processes to $init_leaf"
    enabled_cpu=1
    echo "$me: moved the processes of $base into $init_leaf to enable the cpu controller" >&2
}

kill_cgroup_members() {
    local p left=1
    for _ in $(seq 50); do
        left=0
        while read -r p; do left=1; kill -9 "$p" 2>/dev/null; done < "$cg/cgroup.procs"
        [[ $left == 0 ]] && return 0
        sleep 0.1
    done
    echo "$me: processes still in $cg: $(tr '\n' ' ' < "$cg/cgroup.procs")" >&2
}

print_stats() {
    local status=$1 periods=0 throttled=0 throttled_us=0 usage_us=""
    if [[ $version == 2 ]]; then
        periods=$(awk '$1 == "nr_periods" { print $2 }' "$cg/cpu.stat")
        throttled=$(awk '$1 == "nr_throttled" { print $2 }' "$cg/cpu.stat")
        throttled_us=$(awk '$1 == "throttled_usec" { print $2 }' "$cg/cpu.stat")
        usage_us=$(awk '$1 == "usage_usec" { print $2 }' "$cg/cpu.stat")
    else
        periods=$(awk '$1 == "nr_periods" { print $2 }' "$cg/cpu.stat")
        throttled=$(awk '$1 == "nr_throttled" { print $2 }' "$cg/cpu.stat")
        throttled_us=$(awk '$1 == "throttled_time" { printf "%d", $2 / 1000 }' "$cg/cpu.stat")
        # cpuacct is a controller of its own on v1, with a group of the same name only where it is co-mounted
        [[ -f $cg/cpuacct.usage ]] && usage_us=$(awk '{ printf "%d", $1 / 1000 }' "$cg/cpuacct.usage")
    fi
    echo "$me: cgroup v$version, quota $quota_cpus CPUs ($quota/$period us), $busy busy co-tenant$([[ $busy == 1 ]] || echo s):" \
        "${periods:-0} periods, throttled in ${throttled:-0} ($(awk -v t="${throttled:-0}" -v n="${periods:-0}" \
        'BEGIN { printf "%.1f", (n > 0 ? 100 * t / n : 0) }')%), $(awk -v u="${throttled_us:-0}" 'BEGIN { printf "%.3f", u / 1e6 }') s throttled$(
        [[ -n $usage_us ]] && awk -v u="$usage_us" 'BEGIN { printf ", %.3f s CPU", u / 1e6 }')" >&2
    if [[ -n $stats_file ]]; then
        printf '%s\n' "version=$version" "cgroup=$cg" "quota_us=$quota" "period_us=$period" "busy=$busy" \
            "nr_periods=${periods:-0}" "nr_throttled=${throttled:-0}" "throttled_us=${throttled_us:-0}" \
            "usage_us=${usage_us:-}" "exit=$status" > "$stats_file"
    fi
}

cleanup() {
    local status=$?
    [[ $cleaned == 1 ]] && return
    cleaned=1
    local p
    for p in "${busy_pids[@]}"; do kill -9 "$p" 2>/dev/null; done
    if [[ -n $cmd_pid ]] && kill -0 "$cmd_pid" 2>/dev/null; then
        kill -TERM "$cmd_pid" 2>/dev/null
        for _ in $(seq 100); do kill -0 "$cmd_pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$cmd_pid" 2>/dev/null
    fi
    for p in "${busy_pids[@]}" $cmd_pid; do wait "$p" 2>/dev/null; done
    if [[ -n $cg && -d $cg ]]; then
        kill_cgroup_members
        print_stats "$status"
        for _ in $(seq 20); do rmdir "$cg" 2>/dev/null && break; sleep 0.1; done
        [[ -d $cg ]] && echo "$me: could not remove $cg" >&2
    fi
    if [[ -n $init_leaf && -d $init_leaf ]]; then
        # back as it was: no controller for the children, the processes in the root again
        [[ $enabled_cpu == 1 ]] && echo -cpu 2>/dev/null > "$base/cgroup.subtree_control"
        while read -r p; do echo "$p" 2>/dev/null > "$base/cgroup.procs"; done < "$init_leaf/cgroup.procs"
        rmdir "$init_leaf" 2>/dev/null || echo "$me: left $init_leaf in place (processes still in it)" >&2
    fi
}

signalled=0
on_signal() {
    # first signal: COMMAND gets SIGTERM and may finish (a bench prints the rows it has); second: it is killed
    if [[ $signalled != 0 ]]; then
        rc=$1
        exit "$rc"
    fi
    signalled=$1
    [[ -n $cmd_pid ]] && kill -TERM "$cmd_pid" 2>/dev/null
}
trap cleanup EXIT
trap 'on_signal 130' INT
trap 'on_signal 143' TERM
trap 'on_signal 129' HUP

[[ $version == 2 ]] && enable_cpu_v2
cg=$base/$me.$$
mkdir "$cg" || { cg=""; die "cannot create $base/$me.$$"; }
if [[ $version == 2 ]]; then
    echo "$quota $period" > "$cg/cpu.max" || die "cannot write cpu.max of $cg"
else
    echo "$period" > "$cg/cpu.cfs_period_us" && echo "$quota" > "$cg/cpu.cfs_quota_us" \
        || die "cannot set cpu.cfs_period_us/cpu.cfs_quota_us of $cg"
fi

# the co-tenants' loop is bench --busy's: every 20000 iterations it checks that its parent (this script) is
# still its parent and exits if not, so a SIGKILL of this script leaves no loop spinning
spin='while :; do i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; if [ -r /proc/$$/stat ]; then read -r a b c p r < /proc/$$/stat; [ "$p" = "$PPID" ] || exit 0; else kill -0 $PPID 2>/dev/null || exit 0; fi; done'
for _ in $(seq "$busy"); do
    (echo "$BASHPID" > "$cg/cgroup.procs" && exec sh -c "$spin") &
    busy_pids+=($!)
done
(echo "$BASHPID" > "$cg/cgroup.procs" && exec "$@") &
cmd_pid=$!
# wait returns early when a trapped signal arrives; COMMAND may still be running then
while :; do
    wait "$cmd_pid"
    rc=$?
    kill -0 "$cmd_pid" 2>/dev/null || break
done
# no signal arrived after COMMAND ended: its exit code is the script's
exit "$rc"
