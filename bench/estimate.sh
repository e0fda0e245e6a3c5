#!/usr/bin/env bash
# bench/estimate.sh - the dry run's whole-run estimate (run/estimate.h) against the run's own
# wall time, on sweeps of different kinds: the default sweep, collectives alone, a preset's
# layers, the README's first run, a --block run, --repeat 2 and --budget (whose estimate is
# a range: about the planned looks, at most the budget spent). Prints one line per sweep:
# estimate, its lower end (calibrations settled at once), its upper end (--budget spent),
# wall time, and the ratio of the wall time to the nearer end of the range (1 inside).
#
#   bench/estimate.sh [BUILD]          (default: build; 2 ranks; about 2 minutes here)
set -euo pipefail
build=${1:-build}
tpbal=$(realpath "$build/src/tpbal")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_MCA_rmaps_base_oversubscribe=1 OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
if [[ $(id -u) -eq 0 ]]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
sweeps=("default|"
    "comm-only|--comm-only --comm-sizes 4K,1M,16M --iters 50"
    "preset|--preset llama3-8b-cpu --tp 1,2 --iters 10"
    "first run|--emulate-speed 1,0.5 --tp 1,2 --shape 512x768x512 --check"
    "block|--model llama3-8b-cpu --tp 1,2 --iters 10"
    "repeat 2|--repeat 2 --tp 1,2 --shape 256x512x512 --iters 10"
    "budget|--tp 2 --shape 256x512x512 --iters 12 --budget 10")
secs() { # "12 s" | "3.5 min" | "2 h" -> seconds
    awk -v v="$1" -v u="$2" 'BEGIN{print v * (u == "min" ? 60 : u == "h" ? 3600 : 1)}'
}
printf "%-10s %9s %9s %9s %9s %7s\n" sweep "estimate" "settled" "at most" "wall" "ratio"
for s in "${sweeps[@]}"; do
    name=${s%%|*}
    args=${s#*|}
    # shellcheck disable=SC2086 # the arguments are words
    # shellcheck disable=SC2086
    dry=$(mpirun -q -np 2 "$tpbal" --dry-run --wide $args)
    line=$(grep "^tpbal: dry run: about .* in all" <<<"$dry")
    read -r v u <<<"$(sed -n 's/^tpbal: dry run: about \([0-9.e+]*\) \(s\|min\|h\) in all.*/\1 \2/p' <<<"$line")"
    read -r lv lu <<<"$(sed -n 's/.* in all (\([0-9.e+]*\) \(s\|min\|h\) if every.*/\1 \2/p' <<<"$line")"
    est=$(secs "$v" "$u")
    least=$([[ -n "${lv:-}" ]] && secs "$lv" "$lu" || echo "$est")
    # --repeat and --budget: the launch's line, "in all (N passes): about X, at most Y ..."
    whole=$(grep "^tpbal: dry run: in all" <<<"$dry" || true)
    most=$est
    if [[ -n "$whole" ]]; then
        read -r v u <<<"$(sed -n 's/.*: about \([0-9.e+]*\) \(s\|min\|h\).*/\1 \2/p' <<<"$whole")"
        est=$(secs "$v" "$u")
        most=$est
        least=$est
        read -r lv lu <<<"$(sed -n 's/.* (\([0-9.e+]*\) \(s\|min\|h\) if every.*/\1 \2/p' <<<"$whole")"
        [[ -z "${lv:-}" ]] || least=$(secs "$lv" "$lu")
        read -r mv mu <<<"$(sed -n 's/.*, at most \([0-9.e+]*\) \(s\|min\|h\).*/\1 \2/p' <<<"$whole")"
        [[ -z "${mv:-}" ]] || most=$(secs "$mv" "$mu")
    fi
    rm -rf "$work/r"
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    mpirun -q -np 2 "$tpbal" $args -q --out "$work/r" >/dev/null
    t1=$(date +%s.%N)
    # ratio: the wall time over the nearer end of [settled, at most] (1 inside the range)
    awk -v n="$name" -v e="$est" -v l="$least" -v m="$most" -v a="$t0" -v b="$t1" \
        'BEGIN{w=b-a; r = w > m ? w/m : w < l ? w/l : 1; printf "%-10s %8.1fs %8.1fs %8.1fs %8.1fs %7.2f\n", n, e, l, m, w, r}'
done
