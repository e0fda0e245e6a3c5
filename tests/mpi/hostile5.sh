# hostile5.sh - the fifth hostile probe's C-side cases (issue 57), each failing on the code
# before its fix: a FIFO in --out, an option's file that is one of the run's own, names that
# are not UTF-8 or hold line separators, --force removing a user's files, error lines that
# echo control bytes or lose their hint, and values accepted that mean nothing. The Python
# tools' cases are in tests/python (test_mutations.py, test_results.py).
. "$(dirname "$0")/lib.sh"

# 1. a FIFO where --force reads the earlier record: one line, no hang, the folder as it was
mkdir -p "$WORK/ff" && mkfifo "$WORK/ff/results.jsonl"
start=$(date +%s)
refused "is a FIFO, not a regular file" --tp 2 --shape 32x64x64 --iters 3 --force --out "$WORK/ff"
[ $(($(date +%s) - start)) -lt 60 ] || fail "the FIFO held tpbal"
[ -p "$WORK/ff/results.jsonl" ] && [ "$(ls -A "$WORK/ff")" = results.jsonl ] ||
    fail "the FIFO's folder changed: $(ls -A "$WORK/ff")"

# 2. an option's file that is one the run writes in --out (--calibration-file replaced the
#    results with the calibration table; a trace or a pass folder the same): refused before
#    anything is written, the earlier run's files as they were
tpbal 2 --tp 2 --shape 32x64x64 --iters 3 --out "$WORK/cc"
expect_rc 0
cp "$WORK/cc/results.csv" "$WORK/cc.before"
for f in "$WORK/cc/results.csv" "$WORK/cc/../cc/trace-000.json" "$WORK/cc/pass-2/cal.csv"; do
    refused "is a file this run writes in --out" --tp 2 --policy even,weighted --shape 32x64x64 \
        --iters 3 --force --calibration-file "$f" --out "$WORK/cc"
done
refused "--shards-from $WORK/cc/results.jsonl is a file this run writes" --tp 2 --shape 32x64x64 \
    --iters 3 --force --shards-from "$WORK/cc/results.jsonl" --out "$WORK/cc"
cmp -s "$WORK/cc.before" "$WORK/cc/results.csv" || fail "a refused run changed the results"

# 3. names that are not UTF-8, or hold U+2028 / U+0085: the result files stay valid UTF-8
#    JSON of one record a line (bytes >= 0x20 went out raw: the tools refused them), the tools
#    read them, and the CSV reads back the same names
odd="$WORK/odd-$(printf '\377\342\200\250\302\205')dir"
printf 'layer%s 32 64 64 col\n' "$(printf '\342\200\251')" >"$WORK/odd.shapes"
tpbal 2 --tp 1,2 --preset "$WORK/odd.shapes" --iters 3 --out "$odd"
expect_rc 0
"$PY" - "$odd" <<'EOF' || fail "the result files are not UTF-8 JSON lines"
import csv, io, json, sys
d = sys.argv[1].encode("utf-8", "surrogateescape").decode("utf-8", "surrogateescape")
raw = open(sys.argv[1] + "/results.jsonl", "rb").read()
text = raw.decode("utf-8")  # strict: a stray byte fails here
recs = [json.loads(l) for l in text.split("\n") if l]
assert all("\u2028" not in l and "\x85" not in l for l in text.split("\n")), "a raw separator"
cfgs = [r for r in recs if r.get("type") == "config"]
assert cfgs and all(c["shape"] == "layer\u2029" for c in cfgs), [c["shape"] for c in cfgs]
rows = list(csv.DictReader(io.StringIO(open(sys.argv[1] + "/results.csv", "rb").read()
                                       .decode("utf-8"), newline="")))
assert len(rows) == len(cfgs) and rows[0]["shape"] == "layer\u2029", rows[:1]
print("odd names: %d configs read back" % len(cfgs))
EOF
"$TPBAL_REPORT" "$odd" >"$WORK/rep.out" 2>&1 || fail "tpbal-report on odd names: $(tail -2 "$WORK/rep.out")"
"$TPBAL_COMPARE" "$odd" "$odd" >"$WORK/cmp.out" 2>&1 ||
    fail "tpbal-compare on odd names: $(tail -2 "$WORK/cmp.out")"
"$TPBAL_PLAN" "$odd" >"$WORK/plan.out" 2>&1 || fail "tpbal-plan on odd names: $(tail -2 "$WORK/plan.out")"

# 4. --force removes only what the earlier run's own records name: a user's hidden files that
#    looked like tpbal's temporaries stay, and after a SIGKILLed run its traces go (named by
#    its config records) while a trace-777.json the user added stays
tpbal 2 --tp 1,2 --shape 32x64x64 --iters 3 --out "$WORK/fo"
expect_rc 0
echo keep >"$WORK/fo/.notes.tmp.txt" && echo keep >"$WORK/fo/.data.csv.tpbal-keep"
tpbal 2 --tp 2 --shape 32x64x64 --iters 3 --out "$WORK/fo" --force
expect_rc 0
[ -f "$WORK/fo/.notes.tmp.txt" ] && [ -f "$WORK/fo/.data.csv.tpbal-keep" ] ||
    fail "--force removed a user's hidden file: $(ls -A "$WORK/fo")"
[ ! -e "$WORK/fo/trace-004.json" ] || fail "--force kept the earlier run's trace-004.json"
( $MPIRUN -np 2 "$TPBAL" --tp 1,2 --split row,col --shape 32x64x64 --iters 150000 \
    --out "$WORK/fk" >/dev/null 2>&1 & wait ) &
killer=$!
for _ in $(seq 1 120); do
    [ -e "$WORK/fk/trace-001.json" ] && break
    sleep 0.5
done
pkill -KILL -f "$TPBAL --tp 1,2 --split row,col --shape 32x64x64 --iters 150000" || true
wait "$killer" 2>/dev/null || true
[ -e "$WORK/fk/trace-001.json" ] || fail "the run to kill wrote no second trace in 60 s"
grep -q '"status":"running' "$WORK/fk/results.jsonl" || fail "the killed run's record"
echo mine >"$WORK/fk/trace-777.json"
tpbal 2 --tp 1 --split row --shape 32x64x64 --iters 3 --out "$WORK/fk" --force
expect_rc 0
[ "$(cat "$WORK/fk/trace-777.json")" = mine ] || fail "--force removed the user's trace-777.json"
[ ! -e "$WORK/fk/trace-001.json" ] || fail "--force kept the killed run's trace-001.json"

# 5. error lines print what they were given safely: control bytes escaped (an OSC sequence
#    set the terminal's title), a 100 KB option shortened so that the hint stays
refused "--tp '2\\\\e]0;pwned\\\\x07': expected" --tp "$(printf '2\033]0;pwned\007')"
if grep -q "$(printf '\033')" "$WORK/err"; then fail "an escape byte reached stderr"; fi
long="--$("$PY" -c "print('x' * 100000)")"
refused "unknown option '--xxxxxxxx.*\\.\\.\\. (100002 bytes)': see tpbal --help" "$long"
refused "unknown option '--itres': did you mean --iters?" --itres 5

# 6. values that meant nothing: --timeout 1e-9 (printed as 0 s, which is off; a segfault on the
#    CUDA path after a failed enter()), an empty field in --comm-sizes
refused "--timeout '1e-9': expected 0 (off) or seconds from 1 to 1e7" --timeout 1e-9
refused "--comm-sizes '4K::16M': an empty field" --comm-only --comm-sizes 4K::16M
refused "--comm-sizes '4K:16M:': an empty field" --comm-only --comm-sizes 4K:16M:
# 7. a --repeat run's record tells the truth: --repeat 2 --force over 3 passes refused (pass-3
#    stale beside the new ones, and pooled); a stop in pass 1 of a forced rerun leaves
#    repeat.json "interrupted", naming the new command line and no pass of the old run; a pass
#    folder that is a link refused before pass 1; the tools refuse a pass named twice, passes of
#    another command line, and say what a folder of passes without repeat.json is
tpbal 2 --tp 2 --shape 32x64x64 --iters 3 --repeat 3 --out "$WORK/rp"
expect_rc 0
cp "$WORK/rp/repeat.json" "$WORK/rp.json"
refused "holds pass-3 of an earlier --repeat run, which --repeat 2 would leave" --tp 2 \
    --shape 32x64x64 --iters 3 --repeat 2 --force --out "$WORK/rp"
cmp -s "$WORK/rp/repeat.json" "$WORK/rp.json" || fail "a refused --repeat changed repeat.json"
cp -r "$WORK/rp" "$WORK/rk"
"$TPBAL" --tp 1 --shape 128x256x256 --iters 3000 --warmup 2 --repeat 3 --force --out "$WORK/rk" \
    >"$WORK/out" 2>"$WORK/err" &
pid=$!
for _ in $(seq 1 600); do grep -q -- "--iters 3000" "$WORK/rk/repeat.json" && break; sleep 0.05; done
kill -TERM "$pid"
wait "$pid"
[ $? -eq 143 ] || fail "the stopped --repeat --force run: exit, expected 143"
"$PY" - "$WORK/rk" <<'PYEOF' || fail "repeat.json after a stop in a forced rerun"
import json, sys
rep = json.load(open(sys.argv[1] + "/repeat.json"))
assert rep["status"] == "interrupted" and "--iters 3000" in rep["command_line"], rep
assert rep["pass_dirs"] == ["pass-%d" % (k + 1) for k in range(rep["passes_done"])], rep
PYEOF
if grep -q '"passes_done":0' "$WORK/rk/repeat.json"; then
    "$TPBAL_COMPARE" "$WORK/rk" "$WORK/rp" >"$WORK/cmp.out" 2>&1
    [ $? -eq 2 ] && grep -q "says interrupted before its first pass was done" "$WORK/cmp.out" ||
        fail "tpbal-compare on a repeat stopped in pass 1: $(tail -2 "$WORK/cmp.out")"
fi
mkdir -p "$WORK/sl" && ln -s pass-2 "$WORK/sl/pass-2"
refused "sl/pass-2 is a symbolic link, not a pass's folder" --tp 2 --shape 32x64x64 --iters 3 \
    --repeat 2 --out "$WORK/sl"
[ ! -e "$WORK/sl/pass-1" ] || fail "pass 1 ran before the linked pass-2 was refused"
"$PY" - "$WORK/rp" <<'PYEOF'
import json, sys
rep = json.load(open(sys.argv[1] + "/repeat.json"))
rep["pass_dirs"] = ["pass-1"] * 3
open(sys.argv[1] + "/repeat.json", "w").write(json.dumps(rep) + "\n")
PYEOF
"$TPBAL_COMPARE" "$WORK/rp" "$WORK/rp" >"$WORK/cmp.out" 2>&1
[ $? -eq 2 ] && grep -q "names pass-1 more than once" "$WORK/cmp.out" ||
    fail "a pass named thrice: $(tail -2 "$WORK/cmp.out")"
cp "$WORK/rp.json" "$WORK/rp/repeat.json"
sed -i '1s/--iters 3 /--iters 4 /' "$WORK/rp/pass-2/results.jsonl"
"$TPBAL_COMPARE" "$WORK/rp" "$WORK/rp" >"$WORK/cmp.out" 2>&1
[ $? -eq 2 ] && grep -q "pass-2 was run by another command line" "$WORK/cmp.out" ||
    fail "a pass of another command line: $(tail -2 "$WORK/cmp.out")"
rm "$WORK/rp/repeat.json"
for tool in "$TPBAL_COMPARE $WORK/rp $WORK/rp" "$TPBAL_REPORT $WORK/rp"; do
    $tool >"$WORK/t.out" 2>&1
    [ $? -eq 2 ] && grep -q "holds a --repeat run's passes but no repeat.json" "$WORK/t.out" ||
        fail "$tool without repeat.json: $(tail -2 "$WORK/t.out")"
done
# 8. the dry run refuses what the run refuses (memory, a folder another run holds, a sweep of
#    skipped configs) and gives no absurd figure; --budget where nothing can take a second look
#    is refused, in the run and its dry run; a refused run leaves no folders it made, and a
#    sweep whose every config is skipped leaves no files
refused "shape 2147483647x2x2 (fp32, tp 2, row) needs [0-9]* bytes on rank" --dry-run --tp 2 \
    --shape 2147483647x2x2
tpbal 2 --dry-run --tp 2 --policy even --shape 8192x8192x8192 --iters 10000000
expect_rc 0
grep -q "^tpbal: dry run: about 1000+ h in all" "$WORK/out" || fail "the dry run's absurd figure"
seq 1 100 >"$WORK/many"
refused "no config would be measured on the 2 ranks: every one is skipped" --dry-run --tp 2 \
    --shape 16x64x64 --cost-profile "$WORK/many" --speeds 1,1
refused "no config was measured on the 2 ranks: every one was skipped" --tp 2 --shape 16x64x64 \
    --cost-profile "$WORK/many" --speeds 1,1 --iters 2 --warmup 1 --out "$WORK/sk"
[ ! -e "$WORK/sk" ] || fail "a sweep of skipped configs left $(ls -A "$WORK/sk")"
mkdir -p "$WORK/mm"
tpbal 2 --tp 2 --shape 2147483647x2x2 --out "$WORK/mm/a/b" # a note says it made a and b
expect_rc 2
grep -q "needs [0-9]* bytes on rank" "$WORK/err" || fail "no memory refusal"
[ -z "$(ls -A "$WORK/mm")" ] || fail "a memory refusal left folders: $(ls -R "$WORK/mm")"
for inert in "--interleave off" "--policy even" "--iters 4" "--timeline off"; do
    # shellcheck disable=SC2086 # one option and its value
    refused "--budget has no effect here" --tp 2 --shape 64x64x64 --budget 20 $inert
    # shellcheck disable=SC2086
    refused "--budget has no effect here" --dry-run --tp 2 --shape 64x64x64 --budget 20 $inert
done
refused "--budget has no effect here" --comm-only --tp 2 --speeds 1,2 --budget 20
"$TPBAL" --tp 1 --shape 256x256x256 --iters 1000000 --out "$WORK/held" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 600); do [ -e "$WORK/held/.tpbal.lock" ] && break; sleep 0.05; done
refused "--out $WORK/held is in use by another tpbal run (pid $pid" --dry-run --tp 2 \
    --shape 64x64x64 --force --out "$WORK/held"
kill -TERM "$pid"
wait "$pid"

# 9. a --budget set stopped in a later look keeps its completed looks (it was dropped whole):
#    the straggler keeps the set open after look 1 whatever the timing (12 iterations, 6 blocks,
#    7 needed: budget.sh), and each look of this shape lasts seconds, so the stop lands in look 2
d="$WORK/bs"
$MPIRUN -np 2 "$TPBAL" --tp 2 --split row --shape 1024x2048x2048 --iters 12 --warmup 1 \
    --budget 600 --emulate-speed 1,0.5 --out "$d" >"$WORK/bs.out" 2>"$WORK/bs.err" &
pid=$!
for _ in $(seq 1 1200); do grep -q "open after look 1" "$WORK/bs.err" 2>/dev/null && break; sleep 0.05; done
grep -q "open after look 1" "$WORK/bs.err" || fail "the set did not take a second look: $(cat "$WORK/bs.err")"
kill -TERM "$pid"
wait "$pid"
rc=$?
[ $rc -ne 0 ] && grep -q "interrupted by signal 15" "$WORK/bs.err" ||
    fail "the stopped --budget run: exit $rc ($(tail -3 "$WORK/bs.err"))"
"$PY" - "$d" <<'PYEOF' || fail "a --budget set stopped in a later look"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1] + "/results.jsonl") if l.strip()]
run = recs[0]
assert run["status"] == "interrupted", run["status"]
cfgs = [r for r in recs if r.get("type") == "config"]
assert len(cfgs) == 2, [c.get("policy") for c in cfgs]  # the set's two policies, whole
for c in cfgs:
    assert c["budget_looks"] >= 1 and c["iters"] == 12 * c["budget_looks"], c
print("budget set kept: looks %s" % [c["budget_looks"] for c in cfgs])
PYEOF
echo "hostile5: ok"
