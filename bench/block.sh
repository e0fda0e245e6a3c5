#!/usr/bin/env bash
# bench/block.sh [RUNS] [ITERS] - a --block against the same GEMMs measured alone, and
# tpbal-plan's leave-one-out prediction of the measured blocks, on 2 ranks of this machine
# (doc/METRICS.md, "Blocks and world plans"). Each of RUNS rounds runs
#   A: tpbal --model llama3-8b-cpu --tp 1,2          (the block, even and weighted at tp 2)
#   B: tpbal --preset llama3-8b-cpu --tp 1,2 --split the preset's (each GEMM a config alone)
# back to back, and prints per TP degree and policy the block's median step, the sum of the
# same four GEMMs' median steps in A (inside the block) and in B (alone), their ratios, and
# tpbal-plan's leave-one-out error on each block of A (models fitted without its GEMMs).
#   Run from the top of the tree after ./scripts/test: bench/block.sh 5 30
set -euo pipefail
runs=${1:-5}
iters=${2:-30}
here=$(cd "$(dirname "$0")" && pwd)
build=${TPBAL_BUILD_DIR:-$(cd "$here/.." && pwd)/build}
work=$(mktemp -d "${TMPDIR:-/tmp}/tpbal-block.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [[ $(id -u) -eq 0 ]]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OPENBLAS_NUM_THREADS=1
common=(--tp 1,2 --iters "$iters" --warmup 5 --quiet)
echo "block: $runs rounds, $iters iterations, $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs))"
for i in $(seq 1 "$runs"); do
    mpirun -np 2 "$build/src/tpbal" --model llama3-8b-cpu "${common[@]}" --out "$work/a$i" >/dev/null 2>&1
    mpirun -np 2 "$build/src/tpbal" --preset llama3-8b-cpu "${common[@]}" --out "$work/b$i" >/dev/null 2>&1
    "$build/src/tools/tpbal-plan" "$work/a$i" --format json >"$work/p$i.json"
done
python3 - "$work" "$runs" <<'PYEOF'
import json, os, statistics, sys
work, runs = sys.argv[1], int(sys.argv[2])
def recs(d):
    return [json.loads(l) for l in open(os.path.join(d, "results.jsonl"))]
print("%-4s %-3s %-9s %10s %12s %12s %8s %8s %9s" % ("run", "tp", "policy", "block ms",
      "GEMMs in ms", "alone ms", "in/blk", "alone/blk", "LOO err"))
ratios, loo = {}, {}
for i in range(1, runs + 1):
    a, b = recs(os.path.join(work, "a%d" % i)), recs(os.path.join(work, "b%d" % i))
    cfg = {c["id"]: c for c in a if c["type"] == "config"}
    alone = {(c["shape"], c["tp"], c["policy"]): c["step_us"]["median"]
             for c in b if c["type"] == "config"}
    val = {v["block"]: v for v in json.load(open(os.path.join(work, "p%d.json" % i)))["blocks"]}
    for blk in (r for r in a if r["type"] == "block"):
        gem = [cfg[c] for c in blk["configs"]]
        inside = sum(c["step_us"]["median"] for c in gem)
        out = sum(alone[(c["shape"], c["tp"], c["policy"])] for c in gem)
        step, err = blk["step_us"]["median"], val[blk["id"]]["error"]
        key = (blk["tp"], blk["policy"])
        ratios.setdefault(key, []).append((inside / step, out / step))
        loo.setdefault(key, []).append(err)
        print("%-4d %-3d %-9s %10.2f %12.2f %12.2f %8.3f %8.3f %+8.1f%%" % (
            i, blk["tp"], blk["policy"], step / 1e3, inside / 1e3, out / 1e3, inside / step,
            out / step, 100 * err))
for key in sorted(ratios):
    r, e = ratios[key], [abs(x) for x in loo[key]]
    print("tp %d %-8s: GEMMs inside / block median %.3f, alone / block median %.3f [%.3f, %.3f];"
          " leave-one-out |error| median %.1f %%, largest %.1f %%, within 10 %% in %d of %d" % (
              key[0], key[1], statistics.median(x for x, _ in r), statistics.median(y for _, y in r),
              min(y for _, y in r), max(y for _, y in r), 100 * statistics.median(e),
              100 * max(e), sum(x <= 0.10 for x in e), len(e)))
PYEOF
