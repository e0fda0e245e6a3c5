#!/usr/bin/env bash
# bench/gpu-lease.sh [--standin] [BUNDLE] - the one prepared script for a lent GPU machine
# (one call of the device tool: 15 minutes of device time, at most 8 files back from $OUT).
# First PyTorch's GEMMs timed as tpbal's are (bench/torch_gemm.py, at most 60 s: a reference
# that shares no code with tpbal), then the bundle's gpu-check (DEADLINE 460 s unless given),
# then tpbal's per-GEMM medians of the timed steps beside PyTorch's, as figures (gpu-check
# judges tpbal against its bare loop). Leaves in OUT: lease.txt (everything printed),
# torch.txt, and gpu-check's summary.txt, commands.txt, details.tar.gz and its marker
# (.tpbal-gpu-check) under check/: six files. Exit status: gpu-check's.
#   here:  ./scripts/gpu-bundle .gpu-bundle && bench/gpu-lease.sh --standin .gpu-bundle
#          (the rehearsal on the GPU stand-in; OUT a new temporary folder unless given)
#   lease: run(command="bench/gpu-lease.sh .gpu-bundle", carry=[".gpu-bundle"], timeout_s=590)
# BUNDLE is scripts/gpu-bundle's folder; run from inside a bundle, it is the bundle itself.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
STANDIN=()
if [[ ${1:-} == --standin ]]; then
    STANDIN=(--standin)
    shift
fi
case ${1:-} in
-h | --help)
    sed -n '2,14s/^# \{0,1\}//p' "$0"
    exit 0
    ;;
esac
if [[ $# -gt 1 ]]; then
    echo "usage: bench/gpu-lease.sh [--standin] [BUNDLE]" >&2
    exit 2
fi
B=${1:-$HERE/..}
if [[ ! -f "$B/.tpbal-bundle" || ! -x "$B/bench/gpu-check.sh" ]]; then
    echo "gpu-lease: '$B' is not a bundle: make one with scripts/gpu-bundle DIR and give DIR" >&2
    exit 2
fi
B=$(cd "$B" && pwd)
if [[ -z "${OUT:-}" ]]; then
    OUT=$(mktemp -d "${TMPDIR:-/tmp}/tpbal-lease.XXXXXX") || exit 2
fi
if [[ -L "$OUT" ]] || ! mkdir -p "$OUT"; then
    echo "gpu-lease: OUT='$OUT' is a symbolic link or cannot be made: give a folder" >&2
    exit 2
fi
# its files are made new (noclobber: O_EXCL), never written through a planted link
if ! (set -C && : >"$OUT/lease.txt" && : >"$OUT/torch.txt") 2>/dev/null; then
    echo "gpu-lease: $OUT already holds lease.txt or torch.txt: give a new or empty folder" >&2
    exit 2
fi
say() { echo "lease: $*"; }
# tpbal's per-GEMM median of a timed step beside PyTorch's at its shape and dtype
versus() { # STEP DTYPE SHAPE
    local ours theirs
    ours=$(grep -m1 "^$1: " "$OUT/check/summary.txt" 2>/dev/null |
        sed -n 's/.*(\([0-9.]*\) us a GEMM).*/\1/p')
    theirs=$(awk -v d="$2" -v s="$3" '$1 == "torch_us" && $2 == d && $3 == s {print $4}' \
        "$OUT/torch.txt")
    if [[ -z "$ours" || -z "$theirs" ]]; then
        say "$1 against PyTorch: not compared (tpbal ${ours:-?} us, PyTorch ${theirs:-?} us)"
    else
        say "$1 against PyTorch: tpbal $ours us, PyTorch $theirs us a GEMM: tpbal's rate $(
            awk -v a="$ours" -v b="$theirs" 'BEGIN {printf "%.3f", b / a}') of PyTorch's"
    fi
}
# the lease: PyTorch, gpu-check, the comparison; its status gpu-check's
lease() {
    say "$(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname), bundle $(cat "$B/VERSION" 2>/dev/null)," \
        "OUT $OUT"
    if [[ ${#STANDIN[@]} -gt 0 ]]; then
        echo "torch: not measured: the rehearsal (--standin) has no GPU" >>"$OUT/torch.txt"
    else
        PYTHONUNBUFFERED=1 timeout -k 5 60 python3 "$B/bench/torch_gemm.py" \
            >>"$OUT/torch.txt" 2>&1 ||
            echo "torch: not measured: bench/torch_gemm.py ended with status $?" >>"$OUT/torch.txt"
    fi
    sed 's/^/lease: /' "$OUT/torch.txt"

    t0=$SECONDS
    OUT="$OUT/check" DEADLINE=${DEADLINE:-460} bash "$B/bench/gpu-check.sh" "${STANDIN[@]}"
    local rc=$?
    say "gpu-check ended with status $rc in $((SECONDS - t0)) s"

    if [[ ${#STANDIN[@]} -eq 0 ]]; then
        versus timed-bf16 bf16 8192x8192x8192
        versus timed-fp8 fp8 8192x8192x8192
        versus gate-bf16 bf16 1024x1024x1024
    fi
    return $rc
}
# everything said into lease.txt too (a pipeline: tee has written all before the exit)
lease 2>&1 | tee -a "$OUT/lease.txt"
exit "${PIPESTATUS[0]}"
