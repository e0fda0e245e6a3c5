# tests/mpi/cluster-lib.sh - an emulated cluster on this machine (sourced after lib.sh, by
# cluster.sh, fleet.sh and bench/fleet.sh): one network and UTS namespace per node (host
# names $NODES, default "n1 n2"), joined by veth pairs to a bridge in a namespace of its own
# from which mpirun starts them (its launch agent enters the namespaces instead of ssh).
# Ranks on one node talk through shared memory, across nodes over TCP (198.18.0.0/24, the
# benchmarking range, only inside these namespaces). Exits 77 (skip) without root or the
# tools; every namespace is removed on exit. Defines cl_run HOSTS NP "MCA" PROGRAM ARGS...
# and cl_tpbal ARGS... (4 ranks, 2 per node of n1 and n2), and $P (the namespaces' prefix).
NODES=${NODES:-n1 n2}
[ "$(id -u)" = 0 ] || { echo "SKIP: network namespaces need root"; exit 77; }
for c in ip unshare tc; do
    command -v "$c" >/dev/null 2>&1 || { echo "SKIP: $c not installed"; exit 77; }
done
P="tpb$$"
NS="${P}h"
for n in $NODES; do NS="$NS $P$n"; done
cleanup() {
    for n in $NS; do ip netns del "$n" 2>/dev/null; done
    rm -rf "$WORK"
}
trap cleanup EXIT
for n in $NS; do
    ip netns add "$n" || { echo "SKIP: cannot create network namespaces here"; exit 77; }
done
ip -n "${P}h" link add br0 type bridge && ip -n "${P}h" link set br0 up &&
    ip -n "${P}h" addr add 198.18.0.254/24 dev br0 && ip -n "${P}h" link set lo up ||
    fail "cannot build the bridge"
i=1
for n in $NODES; do
    ip link add "v$n$P" netns "${P}h" type veth peer name eth0 netns "$P$n" &&
        ip -n "${P}h" link set "v$n$P" master br0 up &&
        ip -n "$P$n" addr add "198.18.0.$i/24" dev eth0 &&
        ip -n "$P$n" link set eth0 up && ip -n "$P$n" link set lo up || fail "cannot link $n"
    i=$((i + 1))
done
cat >"$WORK/agent" <<AGENT
#!/bin/bash
# mpirun's launch agent: run the command in the node's namespaces, under its host name
host=\$1
shift
exec ip netns exec "$P\$host" unshare --uts bash -c 'hostname "\$0"; eval "\$*"' "\$host" "\$@"
AGENT
chmod +x "$WORK/agent"

cl_run() { # HOSTS NP "MCA ARGS" PROGRAM ARGS...: mpirun from the bridge's namespace
    local hosts=$1 np=$2 mca=$3
    shift 3
    echo "+ [$hosts] mpirun -np $np $(basename "$1") ${*:2}"
    # shellcheck disable=SC2086
    timeout 240 ip netns exec "${P}h" $MPIRUN --mca plm_rsh_agent "$WORK/agent" \
        --host "$hosts" -np "$np" --mca oob_tcp_if_include 198.18.0.0/24 \
        --mca btl_tcp_if_include 198.18.0.0/24 $mca "$@" >"$WORK/out" 2>"$WORK/err"
    RC=$?
    [ $RC -ne 124 ] || fail "$(basename "$1") hung on the emulated cluster"
}
cl_tpbal() { cl_run n1:2,n2:2 4 "" "$TPBAL" "$@"; } # ARGS...: 4 ranks, 2 per node

