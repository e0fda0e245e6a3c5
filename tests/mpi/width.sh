# width.sh - the quickstart's sweep (its mpirun line, defaults and all) in a 120-column
# terminal: no line of its output is wider (the table fits by itself; the '#' lines fold
# at the terminal's width); piped, every mode's lines fold at 120 too (a sweep, a block,
# comm-only, the fleet, the dry run); --wide restores every column and keeps the lines
# whole in a pipe; a calibration warning comes after the table, once.
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

# piped: every line of every mode within 120 columns (the answer's and the notes' lines
# fold under their text), the verdict still on its line's first piece
narrow() {
    local wide
    wide=$(awk 'length($0) > 120' "$WORK/out" | wc -l)
    [ "$wide" -eq 0 ] || { awk 'length($0) > 120' "$WORK/out"; fail "$1: $wide lines over 120"; }
}
tpbal 2 --backend host --tp 2 --shape 64x256x256 --iters 12 --out "$WORK/p"
expect_rc 0
narrow "a sweep"
grep -q "^#     row: weighted .*x over even .*: \(better\|worse\|a draw\|inconclusive\|disturbed\)" \
    "$WORK/out" || fail "a piped verdict was folded off its line"
grep -q "^#     " "$WORK/out" || fail "no line folded: the answer's lines are longer than 120"
# the weighted rows carry their speed-up over even with its interval
grep -Eq "^ +[0-9]+ +2 row +weighted .* [0-9.]+x \[[0-9.]+,[0-9.]+\]" "$WORK/out" ||
    fail "no speed-up with its interval in a weighted row"
tpbal 2 --backend host --preset llama3-8b-cpu --block --tp 1,2 --iters 4 --out "$WORK/b"
expect_rc 0
narrow "a block"
tpbal 2 --backend host --comm-only --comm-sizes 4K,64K --tp 2 --iters 4 --out "$WORK/c"
expect_rc 0
narrow "comm-only"
tpbal 2 --backend host --fleet --shape 128x128x128 --fleet-bytes 64K --out "$WORK/f"
expect_rc 0
narrow "the fleet"
# --budget and --repeat: the progress and --budget lines on stderr fold at 120 too, each
# naming its pass; the estimates count the passes and bound the budget
tpbal 2 --backend host --tp 2 --shape 64x256x256 --iters 12 --budget 5 --repeat 2 --emulate-speed 1,0.5 \
    --out "$WORK/bb"
expect_rc 0
narrow "--budget --repeat"
wide=$(awk 'length($0) > 120' "$WORK/err" | wc -l)
[ "$wide" -eq 0 ] || { awk 'length($0) > 120' "$WORK/err"; fail "stderr: $wide lines over 120"; }
grep -q "^tpbal: pass 1 of 2, [0-9]* configs on 2 ranks: about " "$WORK/err" || fail "the start line names no pass"
grep -q "^tpbal: pass 1 of 2, in all (2 passes): about [0-9.]* s, at most [0-9.]* s with --budget 5 s a pass spent$" \
    "$WORK/err" || fail "no estimate of the whole launch: $(grep "in all" "$WORK/err")"
! grep "^tpbal: budget\|^tpbal: config" "$WORK/err" | grep -q . ||
    fail "a progress line that names no pass: $(grep -m1 "^tpbal: budget\|^tpbal: config" "$WORK/err")"
tpbal 2 --backend host --tp 2 --shape 64x256x256 --iters 12 --budget 5 --repeat 3 --dry-run
expect_rc 0
sed -e ':a' -e 'N' -e '$!ba' -e 's/\n    / /g' "$WORK/out" >"$WORK/unfolded" # "tpbal: " lines fold
grep -q "^tpbal: dry run: in all (3 passes): about [0-9.]* s\( (.*if every calibration settles at once)\)\{0,1\}, at most [0-9.]* s with --budget spent in every pass$" \
    "$WORK/unfolded" || fail "the dry run's whole launch: $(grep "in all" "$WORK/out")"
tpbal 2 --backend host --tp 2 --shape 64x256x256 --dry-run
expect_rc 0
narrow "the dry run"
grep -q "^tpbal: dry run: about " "$WORK/out" || fail "no dry-run estimate"

# the tools, piped, within 120 columns too (issue 56: tpbal-plan's 147-column rows, a block
# run's compare rows of 132): the plan of a sweep, a block and a --repeat --budget run, their
# comparisons with themselves, and the report's closing lines
tools_narrow() { # WHAT CMD...
    local what=$1
    shift
    "$@" >"$WORK/tool.out" 2>&1 || fail "$what: $(tail -3 "$WORK/tool.out")"
    local n
    n=$(awk 'length($0) > 120' "$WORK/tool.out" | wc -l)
    [ "$n" -eq 0 ] || { awk 'length($0) > 120' "$WORK/tool.out"; fail "$what: $n lines over 120"; }
}
for d in p b bb; do
    tools_narrow "tpbal-plan $d" "${TPBAL_PLAN:?}" "$WORK/$d"
    tools_narrow "tpbal-plan $d --world 64" "$TPBAL_PLAN" "$WORK/$d" --world 64 --ranks-per-node 8
    tools_narrow "tpbal-compare $d" "${TPBAL_COMPARE:?}" "$WORK/$d" "$WORK/$d"
done
if [ -n "${TPBAL_REPORT:-}" ] && "${TPB_PYTHON_MPL:-false}" -c "import matplotlib" 2>/dev/null; then
    tools_narrow "tpbal-report b" "$TPBAL_REPORT" "$WORK/b"
fi

# --wide: every column (M, N, K, p95, TFLOP/s, %peak, lateness ...)
tpbal 2 --backend host --tp 2 --shape 64x256x256 --iters 12 --policy even --wide
expect_rc 0
grep -q "^#  id  tp split  policy         M       N       K dtype   step(us)    p95(us)" \
    "$WORK/out" || fail "--wide did not print every column"
grep -q "^# answer (median steps, .* (1 + 1/tp)/2 of the iterations" "$WORK/out" ||
    fail "--wide folded a line in a pipe"

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
