#!/usr/bin/env bash
# bench/osu.sh OSU_DIR [ROUNDS] [ITERS] - tpbal's comm-only collectives against OSU's own
# blocking programs (osu_allreduce, osu_allgatherv, osu_reduce_scatter, built in OSU_DIR)
# on 2 ranks of this machine, at 64 KiB, 1 MiB and 16 MiB: ROUNDS (default 3) interleaved
# rounds of each pair (the order of the two alternating), ITERS timed calls each (default
# 200, 20 untimed first, as -i 200 -x 20), the medians over rounds and their ratio.
# S is tpbal's --comm-sizes (the whole array: the all-reduce's message, the gathered
# result, the reduce-scatter's input); OSU's -m is the all-reduce's and reduce-scatter's
# message and osu_allgatherv's per-rank part (S / 2 here). OSU's figure is its "Avg
# Latency": every call timed on each rank from its own start (after a barrier) to its own
# end, a rank's mean over the calls, averaged over the ranks; tpbal's is xfer_us, the
# median over iterations of the last rank's end less the last arrival (doc/METRICS.md).
#   OSU 7.4 without its autotools (from its source tree, c/):
#     for p in osu_allreduce osu_allgatherv osu_reduce_scatter; do
#       mpicc -O2 -DPACKAGE_VERSION='"7.4"' -Ic/util -o $p c/mpi/collective/blocking/$p.c \
#         c/util/osu_util.c c/util/osu_util_mpi.c c/util/osu_util_validation.c \
#         c/util/osu_util_graph.c c/util/osu_util_papi.c -lm; done
#   Run from the repository (after ./scripts/test): bench/osu.sh /tmp/osu
set -euo pipefail
osu=${1:?usage: bench/osu.sh OSU_DIR [ROUNDS] [ITERS]}
rounds=${2:-3}
iters=${3:-200}
here=$(cd "$(dirname "$0")" && pwd)
build=${TPBAL_BUILD_DIR:-$(cd "$here/.." && pwd)/build}
tpbal=$build/src/tpbal
for p in osu_allreduce osu_allgatherv osu_reduce_scatter; do
    [[ -x $osu/$p ]] || { echo "bench/osu.sh: no $osu/$p (build it as this script's head says)" >&2; exit 2; }
done
[[ -x $tpbal ]] || { echo "bench/osu.sh: no $tpbal: build tpbal first (./scripts/test)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/tpbal-osu.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [[ $(id -u) -eq 0 ]]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OPENBLAS_NUM_THREADS=1
warm=$((iters / 10))
# osu PROGRAM BYTES: OSU's average latency in us at BYTES
osu_us() {
    mpirun -np 2 "$osu/$1" -m "$2:$2" -i "$iters" -x "$warm" 2>/dev/null |
        awk -v s="$2" '$1 == s { print $2 }'
}
# tpb COLLECTIVE SPLIT SP BYTES: tpbal's comm-only xfer median in us (its record's
# collective checked against COLLECTIVE)
tpb_us() {
    local d="$work/t$RANDOM$RANDOM"
    mpirun -np 2 "$tpbal" --comm-only --tp 2 --split "$2" --sequence-parallel "$3" \
        --comm-sizes "$4" --iters "$iters" --warmup "$warm" --quiet --out "$d" >/dev/null 2>&1
    python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("type") == "config":
        assert r["collective"] == sys.argv[2], (r["collective"], sys.argv[2])
        print(r["xfer_us"])' "$d/results.jsonl" "$1"
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
echo "bench/osu.sh: $rounds rounds x $iters calls, 2 ranks, $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), $(mpirun --version | head -1)"
printf '%-15s %9s %14s %14s %8s %s\n' collective S "OSU avg us" "tpbal xfer us" ratio "per-round ratios"
# collective, OSU program, tpbal split, sequence parallelism, OSU's -m of S
for spec in "all-reduce osu_allreduce row off 1" "all-gather osu_allgatherv col off 2" \
    "reduce-scatter osu_reduce_scatter row on 1"; do
    read -r name prog split sp div <<<"$spec"
    for s in 65536 1048576 16777216; do
        : >"$work/o"
        : >"$work/t"
        : >"$work/r"
        for r in $(seq 1 "$rounds"); do
            if ((r % 2)); then
                o=$(osu_us "$prog" $((s / div)))
                t=$(tpb_us "$name" "$split" "$sp" "$s")
            else
                t=$(tpb_us "$name" "$split" "$sp" "$s")
                o=$(osu_us "$prog" $((s / div)))
            fi
            echo "$o" >>"$work/o"
            echo "$t" >>"$work/t"
            awk -v t="$t" -v o="$o" 'BEGIN { printf "%.3f\n", t / o }' >>"$work/r"
        done
        om=$(median <"$work/o")
        tm=$(median <"$work/t")
        printf '%-15s %9s %14.1f %14.1f %8.3f %s\n' "$name" "$s" "$om" "$tm" \
            "$(awk -v t="$tm" -v o="$om" 'BEGIN { print t / o }')" "$(paste -sd, "$work/r")"
    done
done
