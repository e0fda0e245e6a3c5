# compare.sh - tpbal-compare on real result files of this suite and on doctored
# copies of them with a known regression, a known improvement, a missing config, a
# config too noisy to tell, a slow node, different schemas and nothing in common; the
# tolerance, --require, the baseline, every output format, and every run of the suite
# compared with itself (it holds, whatever its noise).
. "$(dirname "$0")/lib.sh"
CMP=${TPBAL_COMPARE:?}
DOC="$PY $HERE/doctor.py"

# cmp EXPECTED_RC ARGS...: run tpbal-compare, output in $WORK/cmp, one line on stderr
cmp_rc() {
    local want=$1
    shift
    echo "+ tpbal-compare $*"
    "$CMP" --wide "$@" >"$WORK/cmp" 2>"$WORK/cmperr"
    local rc=$?
    cat "$WORK/cmp" "$WORK/cmperr"
    [ $rc -eq "$want" ] || fail "tpbal-compare $*: exit $rc, expected $want"
    [ "$(grep -c '^tpbal-compare' "$WORK/cmperr")" -eq 1 ] || fail "expected one line on stderr"
}

# two real runs: even and weighted, TP 1 and 2 (configs 0: tp1 row, 1: tp1 col, 2/3: tp2 row
# even/weighted, 4/5: tp2 col even/weighted), and a comm-only run
tpbal 2 --tp 1,2 --shape 64x256x256 --iters 10 --speeds 1,1 --out "$WORK/real"
expect_rc 0
# --wide: the lines whole for grep (test_compare and test_text check the default's folding)
cmp_rc_any() { "$CMP" --wide "$@" >"$WORK/cmp" 2>"$WORK/cmperr"; cat "$WORK/cmp" "$WORK/cmperr"; }
cmp_rc 0 "$WORK/real" "$WORK/real" # a real run against itself holds, whatever its noise
[ "$(grep -c '^  tp' "$WORK/cmp")" -eq 6 ] || fail "six configs expected"
grep -q "6 held" "$WORK/cmperr" || fail "a run against itself did not hold everywhere"
# A: the real files with a known spread (+-2 %) and scores, so that each doctored change below
# is judged against known noise; the noise-aware path has its own doctored case
$DOC "$WORK/real" "$WORK/a" tight
tpbal 2 --comm-only --comm-sizes 64K,1M --iters 10 --out "$WORK/ca"
expect_rc 0

# the same files: nothing regressed (a copy of itself has no delta at all)
$DOC "$WORK/a" "$WORK/same" copy
cmp_rc 0 "$WORK/a" "$WORK/same"
grep -q "0 regressed" "$WORK/cmperr" || fail "a copy regressed"
# the same configs in a directory or a results.jsonl
cmp_rc 0 "$WORK/a/results.jsonl" "$WORK/same/results.jsonl"

# a known regression: config 4 (tp2 col even) 1.5x slower
$DOC "$WORK/a" "$WORK/slow" scale 4 1.5
cmp_rc 1 "$WORK/a" "$WORK/slow"
grep -E "tp2 col 64x256x256 even .* regression$" "$WORK/cmp" || fail "regression not found"
[ "$(grep -c 'regression$' "$WORK/cmp")" -eq 1 ] || fail "more than the doctored config regressed"
grep -q -- "+50.0% \[" "$WORK/cmp" || fail "the step change is not +50.0%"
# the JSON's delta has the table's sign: (B - A) / |A|, +0.5 for a step 1.5x as long; doctored
# copies share their run record: measured alike
grep -q "^# A and B were measured alike" "$WORK/cmp" || fail "alike runs not said alike"
cmp_rc 1 --format json "$WORK/a" "$WORK/slow"
$PY - "$WORK/cmp" <<'EOF2' || fail "the JSON's delta sign or conditions"
import json, sys
d = json.load(open(sys.argv[1]))
r = [r for r in d["rows"] if r["verdict"] == "regression"][0]
assert abs(r["metrics"]["step_us"]["delta"] - 0.5) < 1e-9, r["metrics"]["step_us"]
assert abs(r["step"]["ratio"] - 1.5) < 1e-9, r["step"]
assert d["differ"] == [] and d["a_conditions"] == d["b_conditions"], d["differ"]
assert "+ means B is larger" in d["delta"]
EOF2
# ... unless the tolerance covers it (60 % > the 50 % and its interval, of the iterations alone)
cmp_rc 0 --run-spread 0 --tolerance 60% "$WORK/a" "$WORK/slow"
cmp_rc 1 --tolerance 0.1 "$WORK/a" "$WORK/slow"

# two runs that are not alike (one rank emulated at half speed): said before the verdict,
# side by side, whatever the verdict
tpbal 2 --tp 2 --split row --shape 64x256x256 --iters 10 --emulate-speed 1,0.5 --out "$WORK/emu"
expect_rc 0
cmp_rc_any "$WORK/real" "$WORK/emu"
grep -q "^# A command: [a-z-]*tpbal --tp 1,2 --shape 64x256x256 --iters 10 --speeds 1,1$" "$WORK/cmp" ||
    fail "A's command line (without --out) not shown"
grep -q "^# A and B differ in: command, emulation (none / 1,0.5)$" "$WORK/cmp" ||
    fail "the differing conditions not said"
# (a run whose calibration did not settle adds its noise after it: "; noise: ...")
grep -q "; A and B differ in: command, emulation\(; noise: [^;]*\)\?\(; single runs on both sides: .*\)\?$" "$WORK/cmperr" ||
    fail "not in the verdict line"

# a known improvement: config 2 (tp2 row even) 0.6x the time
$DOC "$WORK/a" "$WORK/fast" scale 2 0.6
cmp_rc 0 "$WORK/a" "$WORK/fast"
grep -E "tp2 row 64x256x256 even .* improved$" "$WORK/cmp" || fail "improvement not found"
# the other way round it is a regression
cmp_rc 1 "$WORK/fast" "$WORK/a"

# a missing config is listed, not a regression
$DOC "$WORK/a" "$WORK/miss" drop 5
cmp_rc 0 "$WORK/a" "$WORK/miss"
grep -q "^# only in A: tp2 col 64x256x256 weighted fp32" "$WORK/cmp" || fail "missing config"
cmp_rc 0 "$WORK/miss" "$WORK/a"
grep -q "^# only in B: tp2 col 64x256x256 weighted fp32" "$WORK/cmp" || fail "extra config"

# too noisy to tell: 8 % slower median from six samples spread over 1.5x: inconclusive is
# its own verdict and exit code, not a pass
$DOC "$WORK/a" "$WORK/noisy" noisy 3 1.08 1.5
cmp_rc 3 "$WORK/a" "$WORK/noisy"
# (or "can't tell", also inconclusive, where the run marked that config disturbed)
grep -E "tp2 row 64x256x256 weighted .* (inconclusive|can't tell)$" "$WORK/cmp" || fail "not inconclusive"

# absolute requirements on B, for all configs or a selection
cmp_rc 0 --require 'lb>=0.01' --require 'step_us<=1e9' "$WORK/a" "$WORK/same"
cmp_rc 1 --require 'busbw_gbs>=1e6@tp=2,split=row' "$WORK/a" "$WORK/same"
grep -q "require failed: tp2 row" "$WORK/cmp" || fail "failed requirement not named"
grep -q "require failed: tp2 col" "$WORK/cmp" && fail "the selection was not applied"
cmp_rc 1 --require 'busbw_gbs>=1e6' "$WORK/ca" "$WORK/ca"

# a slow node: world rank 1 moved to host node-b with score 0.5 in the even configs
$DOC "$WORK/a" "$WORK/node" node 1 node-b 0.5
cmp_rc 1 "$WORK/a" "$WORK/node"
grep -q "^# suspect node node-b: rank 1 score 0.50" "$WORK/cmp" || fail "suspect node not named"
cmp_rc 0 --suspect-threshold 0.4 "$WORK/a" "$WORK/node"
cmp_rc 0 "$WORK/node" "$WORK/node" # as slow in A: listed, and the run holds against itself
grep -q "^# suspect node node-b: rank 1 score 0.50 (A: 0.50) (as slow in A)" "$WORK/cmp" ||
    fail "a node as slow in A not listed as such"

# a baseline from three runs (one 0.3 % slower, one 0.3 % faster), then runs against it
$DOC "$WORK/a" "$WORK/a103" scale 2 1.003
$DOC "$WORK/a" "$WORK/a097" scale 2 0.997
cmp_rc 0 --baseline-out "$WORK/base.json" "$WORK/a" "$WORK/a103" "$WORK/a097"
$PY -c "import json,sys; b=json.load(open(sys.argv[1])); assert b['type']=='baseline' and len(b['configs'])==6 and b['configs'][2]['runs']==3" "$WORK/base.json" || fail "baseline"
cmp_rc 0 "$WORK/base.json" "$WORK/same"
cmp_rc 1 "$WORK/base.json" "$WORK/slow"
# three runs that scatter by 4 % cannot certify a 5 % tolerance: inconclusive
$DOC "$WORK/a" "$WORK/a104" scale 2 1.04
$DOC "$WORK/a" "$WORK/a096" scale 2 0.96
cmp_rc 0 --baseline-out "$WORK/wide.json" "$WORK/a" "$WORK/a104" "$WORK/a096"
cmp_rc 3 "$WORK/wide.json" "$WORK/same"

# formats: markdown, CSV and JSON parse
cmp_rc 1 --format md "$WORK/a" "$WORK/slow"
grep -q "^| config | step B/A \[95% interval\] | detects" "$WORK/cmp" || fail "markdown header"
cmp_rc 1 --format csv "$WORK/a" "$WORK/slow"
$PY -c "import csv,sys; r=list(csv.DictReader(open(sys.argv[1]))); assert len(r)==6 and [x['verdict'] for x in r].count('regression')==1" "$WORK/cmp" || fail "CSV output"
cmp_rc 1 --format json "$WORK/a" "$WORK/slow"
$PY -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['status']==1 and len(d['rows'])==6" "$WORK/cmp" || fail "JSON output"
cmp_rc 1 --format junit "$WORK/a" "$WORK/slow"
$PY -c "import sys, xml.etree.ElementTree as E; t=E.parse(sys.argv[1]).getroot(); assert t.tag=='testsuite' and len(t)==6 and len(t.findall('testcase/failure'))==1" "$WORK/cmp" || fail "JUnit output"

# bad input: one line, exit 2
cmp_rc 2 "$WORK/a" "$WORK/nonexistent"
grep -q "cannot read" "$WORK/cmperr" || fail "unreadable file not named"
$DOC "$WORK/a" "$WORK/schema" schema 99
cmp_rc 2 "$WORK/a" "$WORK/schema"
grep -q "schema version" "$WORK/cmperr" || fail "schema mismatch"
$DOC "$WORK/a" "$WORK/other" shapes
cmp_rc 2 "$WORK/a" "$WORK/other"
grep -q "no config in common" "$WORK/cmperr" || fail "nothing in common"
cmp_rc 2 "$WORK/a" "$WORK/ca"
echo "not json" >"$WORK/junk.jsonl"
cmp_rc 2 "$WORK/a" "$WORK/junk.jsonl"
cmp_rc 2 --tolerance lbx=5% "$WORK/a" "$WORK/same"
cmp_rc 2 --tolerance 3 "$WORK/a" "$WORK/same" # 300 %: not a fraction of 1
cmp_rc 2 --require 'lb>>1' "$WORK/a" "$WORK/same"
cmp_rc 2 --format xml "$WORK/a" "$WORK/same"
cmp_rc 2 "$WORK/a"
"$CMP" --help >"$WORK/help" && grep -q "exit status" "$WORK/help" || fail "--help"
echo "compare: ok"
