# hostile.sh - the second hostile probe's C-side defects, each a regression test
# (issue "Faults and hostile input, round 2"): what crashed, wrote where it should not,
# lost data or cut input silently now works or is refused with one line, exit 2, no
# hang, and nothing of an earlier run is lost. The Python tools' cases are in
# tests/python (test_mutations.py feeds them hundreds of broken result directories).
. "$(dirname "$0")/lib.sh"

# 1. the weighted and adaptive policies at TP 1 (no speeds there): a segfault on every rank
tpbal 2 --tp 1 --shape 64x64x64 --policy weighted --iters 3
expect_rc 0
tpbal 2 --tp 1 --shape 64x64x64 --policy adaptive --iters 4 --rebalance-every 2
expect_rc 0
echo "+ tpbal (a singleton) --shape 64x64x64 --policy weighted"
timeout 120 "$TPBAL" --shape 64x64x64 --policy weighted --iters 3 >"$WORK/out" 2>"$WORK/err" ||
    fail "a singleton with --policy weighted: exit $?"

# 2. speeds that overflowed a sum: huge but equal speeds are an even split; a ratio
#    beyond a million is refused where the speeds enter
tpbal 2 --tp 2 --split col --policy weighted --shape 8x64x64 --speeds 1e308,1e308 --iters 3 \
    --out "$WORK/huge"
expect_rc 0
check_results "$WORK/huge" fields
$PY -c "import json,sys; c=[json.loads(l) for l in open(sys.argv[1])][1]; assert c['shards']==[32,32], c['shards']" \
    "$WORK/huge/results.jsonl" || fail "1e308 speeds did not split evenly"
refused "--speeds: the fastest speed is 1e+07 times the slowest" --speeds 1,1e7
refused "--speeds 'inf': expected a number" --speeds 1,inf

# 3. a device or FIFO as calibration file: refused, never replaced (as root this replaced
#    /dev/null); a symbolic link is refused too (as root, a link planted in a shared folder
#    would have had any file written) and left as it is, its target untouched
refused "--calibration-file /dev/null: cannot write: /dev/null is a character device" \
    --tp 2 --policy weighted --shape 32x64x64 --calibration-file /dev/null
[ -c /dev/null ] || fail "/dev/null is no longer a character device"
mkfifo "$WORK/fifo.csv"
refused "is a FIFO, not a regular file: give a regular file" --tp 2 --policy weighted \
    --shape 32x64x64 --calibration-file "$WORK/fifo.csv"
mkdir -p "$WORK/shared"
echo "keep" >"$WORK/shared/cal.csv"
ln -s "$WORK/shared/cal.csv" "$WORK/link.csv"
refused "link.csv is a symbolic link: tpbal writes no result through a link" --tp 2 \
    --split row --policy weighted --shape 32x64x64 --iters 3 --calibration-file "$WORK/link.csv"
[ -L "$WORK/link.csv" ] || fail "the symbolic link was replaced"
[ "$(cat "$WORK/shared/cal.csv")" = "keep" ] || fail "the link's target was written"

# 4. one run per directory: a second run into a held --out is refused naming the holder;
#    a lock file left by a run that died is taken over
d="$WORK/locked"
( timeout 120 $MPIRUN -np 2 "$TPBAL" --tp 2 --split row --policy even --shape 64x128x128 \
    --iters 3000 --out "$d" >"$WORK/first.out" 2>&1; echo $? >"$WORK/first.rc" ) &
for _ in $(seq 200); do [ -s "$d/.tpbal.lock" ] && break; sleep 0.05; done
[ -s "$d/.tpbal.lock" ] || fail "the first run took no lock"
holder=$(cat "$d/.tpbal.lock")
refused "--out $d is in use by another tpbal run (pid [0-9]* on host $(hostname)" \
    --tp 2 --shape 32x32x32 --iters 2 --out "$d"
wait
[ "$(cat "$WORK/first.rc")" -eq 0 ] || { cat "$WORK/first.out"; fail "the first run failed"; }
check_results "$d" count 1
[ ! -e "$d/.tpbal.lock" ] || fail "the lock file outlived its run"
echo "stale: $holder" >"$d/.tpbal.lock" # a run killed with SIGKILL leaves this behind
tpbal 2 --tp 2 --shape 32x32x32 --split row --policy even --iters 2 --out "$d" --force
expect_rc 0

# 6. a calibration file with a NUL byte: refused whole (the rows after it were ignored,
#    then deleted when the file was rewritten), and left as it was
printf 'split,m,n,k,tp,dtype,rank,host,gflops,spread,samples\nrow,32,64,64,2,fp32,0,h,1,0.01,8\n\0row,32,64,64,2,fp32,1,h,2,0.01,8\n' \
    >"$WORK/nul.csv"
sum=$(md5sum <"$WORK/nul.csv")
refused "has a NUL byte at offset" --tp 2 --policy weighted --shape 32x64x64 \
    --calibration-file "$WORK/nul.csv"
[ "$(md5sum <"$WORK/nul.csv")" = "$sum" ] || fail "the calibration file was changed"

# 8. a preset over 1 MiB is read whole (it was cut at 1 MiB - 1); a NUL byte is refused;
#    a name too long for the record says so
{
    for _ in $(seq 20000); do echo "# a comment line that makes this preset larger than a MiB"; done
    echo "last 64 64 64 row"
} >"$WORK/big.shapes"
[ "$(stat -c %s "$WORK/big.shapes")" -gt 1100000 ] || fail "the preset is not over 1 MiB"
tpbal 2 --tp 2 --preset "$WORK/big.shapes" --policy even --iters 2 --out "$WORK/big"
expect_rc 0
$PY -c "import json,sys; c=[json.loads(l) for l in open(sys.argv[1])][1]; assert c['k']==64 and c['shape']=='last', c" \
    "$WORK/big/results.jsonl" || fail "the shape after 1 MiB was not read whole"
printf 'a 32 32 32 row\n\0b 64 64 64 row\n' >"$WORK/nul.shapes"
refused "--preset $WORK/nul.shapes has a NUL byte at offset 15" --preset "$WORK/nul.shapes"
printf '%s 32 32 32 row\n' "$(printf 'x%.0s' $(seq 60))" >"$WORK/long.shapes"
refused "the name 'xxxxxxxxxxxxxxxxxxxx...' has 60 characters; at most 47 fit" \
    --preset "$WORK/long.shapes"
refused "--preset $WORK/fifo.csv is a FIFO" --preset "$WORK/fifo.csv"

# 9. calibration rows of another host are not this host's speeds: said, and calibrated again
printf 'split,m,n,k,tp,dtype,rank,host,gflops,spread,samples\nrow,32,64,64,2,fp32,0,elsewhere,1,0.01,8\nrow,32,64,64,2,fp32,1,elsewhere,50,0.01,8\n' \
    >"$WORK/other.csv"
tpbal 2 --tp 2 --split row --policy weighted --shape 32x64x64 --iters 3 \
    --calibration-file "$WORK/other.csv" --out "$WORK/other"
expect_rc 0
grep -q "warning: --calibration-file .*: the row of rank 0 was measured on another host" \
    "$WORK/out" || fail "no word about another host's rows"
grep -q '"speed_source":"calibration"' "$WORK/other/results.jsonl" ||
    fail "another host's rows were used"

# 10. a trace that cannot be written on a full disk (a 96 KiB tmpfs of our own, when this
#     machine lets us mount one): the message has the reason, and no record names a config
#     whose trace is missing
mnt="$WORK/full"
mkdir -p "$mnt"
if mount -t tmpfs -o size=96k tmpfs "$mnt" 2>/dev/null; then
    trap 'umount "$mnt" 2>/dev/null; rm -rf "$WORK"' EXIT
    tpbal 2 --tp 2 --split row --policy even --shape 32x32x32 --iters 400 --out "$mnt"
    [ "$RC" -ne 0 ] || fail "a trace that could not be written passed"
    grep -q "cannot write the trace of config 0: No space left on device" "$WORK/err" ||
        fail "no reason for the failed trace"
    if [ -f "$mnt/results.jsonl" ]; then
        ! grep -q '"type":"config"' "$mnt/results.jsonl" || fail "a config without its trace"
    fi
    [ -z "$(ls -A "$mnt" | grep '\.tmp\.')" ] || fail "temporary files left"
    # --force on that full disk: the earlier run is kept whole (it was deleted first)
    rm -rf "${mnt:?}"/* "$mnt"/.[!.]*
    tpbal 2 --tp 2 --split row --policy even --shape 32x32x32 --iters 3 --out "$mnt"
    expect_rc 0
    sum=$(cd "$mnt" && cat results.jsonl results.csv ranks.csv trace-000.json | md5sum)
    tpbal 2 --tp 2 --split row,col --policy even --shape 32x32x32 --iters 400 --out "$mnt" --force
    [ "$RC" -ne 0 ] || fail "a --force run on a full disk passed"
    grep -q "No space left on device" "$WORK/err" || fail "no reason for the full disk"
    [ "$(cd "$mnt" && cat results.jsonl results.csv ranks.csv trace-000.json | md5sum)" = "$sum" ] ||
        fail "--force on a full disk lost the earlier run"
    # all or nothing at every fill level: a singleton sweep of 8 configs on a 256 KiB tmpfs
    # with 0-252 KiB taken leaves a record whose configs, rows, rank rows, traces and file
    # list agree, with the run's end as its status ("failed", sealed in place where the
    # record could not be rewritten), or nothing; never a lock or a temporary. A fleet on a
    # full disk leaves no lock either.
    umount "$mnt"
    mount -t tmpfs -o size=256k tmpfs "$mnt" || fail "cannot mount the 256 KiB tmpfs"
    for fill in $(seq 0 12 252); do
        rm -rf "${mnt:?}"/* "$mnt"/.[!.]*
        [ "$fill" -eq 0 ] || head -c $((fill * 1024)) /dev/zero >"$mnt/filler" 2>/dev/null
        mkdir "$mnt/o"
        "$TPBAL" --tp 1 -m 32,64,128,256 -n 128 -k 128 --iters 200 --warmup 1 -q \
            --out "$mnt/o" >"$WORK/out" 2>"$WORK/err"
        RC=$?
        "$PY" - "$mnt/o" "$RC" <<'PY' >>"$WORK/fills" || fail "fill $fill KiB: a mixed set: $(cat "$WORK/err")"
import csv, json, os, sys
d, rc = sys.argv[1], int(sys.argv[2])
files = sorted(os.listdir(d))
assert not [f for f in files if f.startswith(".")], files  # no lock, no temporary
if "results.jsonl" not in files:
    assert not files and rc != 0, (files, rc)
    print("nothing")
    sys.exit()
recs = [json.loads(line) for line in open(os.path.join(d, "results.jsonl"))]
run = recs[0]
cfgs = [r["id"] for r in recs if r["type"] == "config"]
rows = [int(r["id"]) for r in csv.DictReader(open(os.path.join(d, "results.csv")))]
ranks = list(csv.DictReader(open(os.path.join(d, "ranks.csv"))))
assert cfgs == rows and len(ranks) == len(cfgs) == run["configs"], (cfgs, rows, len(ranks))
assert sorted(run["files"]) == files, (run["files"], files)
assert files == sorted(["results.jsonl", "results.csv", "ranks.csv"] +
                       ["trace-%03d.json" % i for i in cfgs]), files
want = "finished" if rc == 0 else "failed"
assert run["status"] == want, (run["status"], rc)
print(run["status"], len(cfgs))
PY
    done
    echo "hostile: a full disk at 22 fill levels: $(sort "$WORK/fills" | uniq -c | tr -s ' \n' ' ')"
    rm -rf "${mnt:?}"/* "$mnt"/.[!.]*
    head -c $((300 * 1024)) /dev/zero >"$mnt/filler" 2>/dev/null
    mkdir "$mnt/o"
    "$TPBAL" --fleet --out "$mnt/o" >"$WORK/out" 2>"$WORK/err"
    [ $? -ne 0 ] && [ -z "$(ls -A "$mnt/o")" ] || fail "--fleet on a full disk: $(ls -A "$mnt/o")"
    umount "$mnt"
else
    echo "hostile: the full-disk case is skipped: this machine does not let us mount a tmpfs"
fi

# 15. metadata kept whole: a command line of 5,000 characters (cut at 4,095, losing --out)
seed=$(printf '0%.0s' $(seq 5000))42
tpbal 2 --tp 2 --split row --policy even --shape 32x32x32 --iters 2 --seed "$seed" \
    --out "$WORK/longcmd"
expect_rc 0
$PY -c "import json,sys; r=json.loads(open(sys.argv[1]).readline()); c=r['command_line']; assert len(c)>5000 and c.endswith('--out '+sys.argv[2]), len(c)" \
    "$WORK/longcmd/results.jsonl" "$WORK/longcmd" || fail "the command line was cut"

# 16. a flag given twice is refused (the last won silently); the schedule is in the record
refused "--emulate-schedule is given twice" --emulate-schedule 0:1,0.5 --emulate-schedule 0:0.2,1
refused "--iters is given twice" --iters 3 --iters 4
tpbal 2 --tp 2 --split row --policy even --shape 32x64x64 --warmup 2 --iters 10 \
    --emulate-schedule 7:0.5,1 --out "$WORK/sched"
expect_rc 0
$PY - "$WORK/sched/results.jsonl" <<'PY' || fail "the schedule is not in the record"
import json, sys
run, cfg = [json.loads(l) for l in open(sys.argv[1])][:2]
assert run["emulate_schedule"] == {"iter": 7, "speeds": [0.5, 1]}, run["emulate_schedule"]
# measured iterations are the run's 2..11: the switch at 7 is measured iteration 5
assert cfg["emulate_switch_iter"] == 5 and cfg["emulate_asked"] == [1, 1], cfg
PY

# 12. no hang on a FIFO anywhere, and a large calibration file loads in linear-log time
#     (100k rows took 16.7 s, a million more than 120 s)
$PY - "$WORK/many.csv" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("split,m,n,k,tp,dtype,rank,host,gflops,spread,samples\n")
    for i in range(200000):
        f.write("row,%d,64,64,2,fp32,%d,h,1,0.01,8\n" % (1 + i // 2, i % 2))
PY
start=$(date +%s)
tpbal 2 --tp 2 --split row --policy even,weighted --shape 32x32x32 --iters 2 \
    --calibration-file "$WORK/many.csv"
expect_rc 0
took=$(($(date +%s) - start))
echo "200,000 calibration rows: the run took $took s"
[ "$took" -lt 60 ] || fail "200,000 calibration rows took $took s"
echo "hostile: ok"
