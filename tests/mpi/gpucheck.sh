# gpucheck.sh - bench/gpu-check.sh --dry-run: every step's command is printed with a
# line in summary.txt, and the host-side parts (parsing named result fields) run on a
# host-backend result, so the GPU check stays right for the day a GPU is lent.
. "$(dirname "$0")/lib.sh"
top=${TPBAL_SRCDIR:?}
build=$(cd "$(dirname "$TPBAL")/.." && pwd)
OUT="$WORK/gc" BUILD="$build" bash "$top/bench/gpu-check.sh" --dry-run >"$WORK/gc.out" 2>&1 ||
    { cat "$WORK/gc.out"; fail "gpu-check.sh --dry-run failed"; }
cat "$WORK/gc.out"
s="$WORK/gc/summary.txt"
for step in device build tests check-fp32 check-tf32 check-fp16 check-bf16 check-fp8 \
    bare-bf16 timed-bf16 timed-fp8 nccl emulate comm; do
    grep -q "^$step: " "$s" || fail "no summary line for step $step"
done
grep -q "^check-bf16: rc 0, configs [0-9]*, check pass" "$s" || fail "result fields not parsed"
grep -q "emulation .* achieved" "$s" || fail "emulation not summarised"
grep -q -- "--timeout 60" "$WORK/gc/commands.txt" || fail "commands without --timeout"
echo "gpucheck: ok"
