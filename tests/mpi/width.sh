# width.sh - the quickstart's sweep (its mpirun line, defaults and all) in a 120-column
# terminal: no line of its output is wider (the table fits by itself; the '#' lines fold
# at the terminal's width); piped, the same run keeps every '#' line whole for grep;
# --wide restores every column; a calibration warning comes after the table, once.
. "$(dirname "$0")/lib.sh"
command -v script >/dev/null || { echo "SKIP: no script(1) (bsdutils)"; exit 77; }

# the quickstart's command on 2 ranks (scripts/quickstart: --backend host, --out DIR)
echo "+ [a 120-column terminal] mpirun -np 2 tpbal --backend host --out DIR"
cmd="stty cols 120 rows 50; exec timeout 240 $MPIRUN --bind-to none -np 2 $TPBAL --backend host --out $WORK/q"
timeout 300 script -qec "$cmd" "$WORK/tty" >/dev/null 2>&1 || fail "the quickstart sweep failed"
tr -d '\r' <"$WORK/tty" | grep -v '^Script \(started\|done\) on ' >"$WORK/out" # script's own
cat "$WORK/out"
grep -q "^# use for" "$WORK/out" || fail "no answer in the terminal's output"
wide=$(awk 'length($0) > 120' "$WORK/out" | wc -l)
[ "$wide" -eq 0 ] || { awk 'length($0) > 120' "$WORK/out"; fail "$wide lines over 120 columns"; }
grep -q "^#  id  tp split  policy   MxNxK" "$WORK/out" || fail "not the compact table"

# piped: '#' lines whole (the answer's lines are longer than 120 here), the rows the same
tpbal 2 --backend host --tp 2 --shape 64x256x256 --iters 12 --out "$WORK/p"
expect_rc 0
grep -q "^#     row: weighted .*x over even .*: \(better\|worse\|a draw\|inconclusive\|disturbed\)" \
    "$WORK/out" || fail "a piped answer line was folded"
[ "$(awk 'length($0) > 120 && /^#/' "$WORK/out" | wc -l)" -gt 0 ] || fail "no long '#' line kept whole"
[ "$(awk 'length($0) > 120 && !/^#/' "$WORK/out" | wc -l)" -eq 0 ] || fail "a table row over 120"
# the weighted rows carry their speed-up over even with its interval
grep -Eq "^ +[0-9]+ +2 row +weighted .* [0-9.]+x \[[0-9.]+,[0-9.]+\]" "$WORK/out" ||
    fail "no speed-up with its interval in a weighted row"

# --wide: every column (M, N, K, p95, TFLOP/s, %peak, lateness ...)
tpbal 2 --backend host --tp 2 --shape 64x256x256 --iters 12 --policy even --wide
expect_rc 0
grep -q "^#  id  tp split  policy         M       N       K dtype   step(us)    p95(us)" \
    "$WORK/out" || fail "--wide did not print every column"

# a calibration that cannot settle (a 2 % target on a 4x4x4 GEMM is noise): its warning is
# printed once a rank, after the table, before the summary
tpbal 2 --backend host --tp 2 --shape 4x4x4 --iters 8 --split row --policy weighted
expect_rc 0
if grep -q "did not settle" "$WORK/out"; then
    last_row=$(grep -n "^ *[0-9]\+ \+2 " "$WORK/out" | tail -1 | cut -d: -f1)
    first_warn=$(grep -n "did not settle" "$WORK/out" | head -1 | cut -d: -f1)
    [ "$first_warn" -gt "$last_row" ] || fail "a calibration warning inside the table"
    [ "$(grep -c "^# warning: calibration of rank 0 " "$WORK/out")" -le 1 ] || fail "said twice"
else # test_result's warnings_said_once holds the rule without a noisy calibration
    echo "the calibration settled: the warning's place was not exercised in this run"
fi
echo "PASS"
