# slurm.sh - a real one-node Slurm started by the test (munged, slurmctld, slurmd in a
# private directory, on ports of its own): tpbal under srun -n 2 and -n 4 with PMIx and as
# an sbatch job from scripts/slurm/tpbal-cpu.sbatch; the Slurm facts in the results; srun
# without PMI refused with one line. The daemons are stopped by their PIDs on every exit.
# Skips (77) where Slurm and munge are not installed or the test is not root.
. "$(dirname "$0")/lib.sh"
top=${TPBAL_SRCDIR:?}
for c in slurmctld slurmd munged srun sbatch squeue sinfo scontrol runuser; do
    command -v "$c" >/dev/null 2>&1 || { echo "SKIP: $c not installed (Debian: slurm-wlm munge)"; exit 77; }
done
[ "$(id -u)" = 0 ] || { echo "SKIP: starting munged and slurmd needs root"; exit 77; }
id munge >/dev/null 2>&1 || { echo "SKIP: no munge user"; exit 77; }

D=$(mktemp -d /tmp/tpbal-slurm.XXXXXX)
chmod 755 "$D"
PIDS=""
stop() {
    for p in $PIDS; do kill "$p" 2>/dev/null; done
    for p in $PIDS; do # at most ~5 s for each to go
        for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    done
    rm -rf "$D" "$WORK"
}
trap stop EXIT

# ---- munge, as the munge user, on a socket in the private directory
mkdir -p "$D/munge"
chown munge:munge "$D/munge"
dd if=/dev/urandom of="$D/munge/munge.key" bs=1024 count=1 2>/dev/null
chown munge:munge "$D/munge/munge.key"
chmod 400 "$D/munge/munge.key"
runuser -u munge -- munged --socket="$D/munge/munge.socket.2" --key-file="$D/munge/munge.key" \
    --pid-file="$D/munge/munged.pid" --log-file="$D/munge/munged.log" \
    --seed-file="$D/munge/munge.seed" || fail "munged did not start: $(cat "$D/munge/munged.log")"
for _ in $(seq 50); do [ -s "$D/munge/munged.pid" ] && break; sleep 0.1; done
PIDS="$(cat "$D/munge/munged.pid")"

# ---- slurm.conf: this host as the only node, 4 CPUs claimed (2 ranks per core is fine)
host=$(hostname)
port=$((20000 + $$ % 20000))
mkdir -p "$D/state" "$D/spool"
cat >"$D/slurm.conf" <<CONF
ClusterName=tpbaltest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$D/munge/munge.socket.2
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=pmix
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MailProg=/bin/true
ReturnToService=2
SlurmdParameters=config_overrides
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/slurmctld.log
SlurmdLogFile=$D/slurmd.log
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
NodeName=$host NodeAddr=127.0.0.1 CPUs=4 RealMemory=1000 State=UNKNOWN
PartitionName=tpbal Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$D/slurm.conf"
slurmctld -D -i >"$D/slurmctld.out" 2>&1 &
PIDS="$PIDS $!"
slurmd -D >"$D/slurmd.out" 2>&1 &
PIDS="$PIDS $!"
state=
for _ in $(seq 150); do
    state=$(sinfo -h -o %t 2>/dev/null | head -1)
    [ "$state" = idle ] && break
    sleep 0.2
done
[ "$state" = idle ] || fail "Slurm did not come up ($state): $(tail -5 "$D/slurmctld.log" "$D/slurmd.log")"
echo "slurm: up (node $host, state $state)"

srun_tpbal() { # NP ARGS...: srun with PMIx, stdout/err to $WORK/out, err
    local np=$1
    shift
    echo "+ srun -n $np --mpi=pmix tpbal $*"
    timeout 240 srun -n "$np" --mpi=pmix "$TPBAL" "$@" >"$WORK/out" 2>"$WORK/err"
    RC=$?
}

# ---- srun, 2 and 4 ranks
srun_tpbal 2 --tp 2 --shape 64x128x128 --policy even --iters 3 --out "$WORK/s2"
expect_rc 0
check_results "$WORK/s2" fields
check_results "$WORK/s2" slurm 2 "$host"
grep -q "^# slurm: job [0-9]* step 0, cluster tpbaltest, partition tpbal, nodes $host" "$WORK/out" ||
    fail "no Slurm line in the header"
srun_tpbal 4 --tp 2,4 --shape 64x128x128 --policy even --iters 3 --out "$WORK/s4"
expect_rc 0
check_results "$WORK/s4" slurm 4 "$host"
check_results "$WORK/s4" count 4
# BLAS threads under srun (no binding here): each rank its share of the node's cores
srun_tpbal_auto() { (unset OPENBLAS_NUM_THREADS GOTO_NUM_THREADS OMP_NUM_THREADS; srun_tpbal "$@"; exit $RC); }
RC=0
srun_tpbal_auto 2 --tp 2 --shape 64x128x128 --policy even --iters 3 --out "$WORK/st" || RC=$?
expect_rc 0
check_results "$WORK/st" threads auto -

# wait_job JOB: until Slurm no longer lists it (150 s at most)
wait_job() {
    for _ in $(seq 300); do
        [ -z "$(squeue -h -j "$1" 2>/dev/null)" ] && return 0
        sleep 0.5
    done
    fail "job $1 did not finish in 150 s"
}

# ---- sbatch with the template; results in results/slurm-JOBID under the job's directory
mkdir -p "$WORK/job"
job=$(TPBAL="$TPBAL" TPBAL_ARGS="--tp 2 --shape 64x128x128 --policy even --iters 3" \
    sbatch --parsable --nodes=1 --ntasks-per-node=2 --chdir="$WORK/job" \
    "$top/scripts/slurm/tpbal-cpu.sbatch") || fail "sbatch refused the template"
wait_job "$job"
cat "$WORK/job/tpbal-$job.out"
check_results "$WORK/job/results/slurm-$job" fields
check_results "$WORK/job/results/slurm-$job" slurm 2 "$host"
base="$WORK/job/results/slurm-$job"
# ... the CI recipe: --repeat and --budget, compared with that run as the baseline; the job's
# exit is the comparison's (0, 1 or 3 on this noise: only that it ran and said so is asked)
mkdir -p "$WORK/rjob"
job=$(TPBAL="$TPBAL" TPBAL_BASELINE="$base" TPBAL_COMPARE="${TPBAL_COMPARE:?}" \
    TPBAL_ARGS="--tp 2 --shape 64x128x128 --policy even,weighted --iters 6 --repeat 2 --budget 5" \
    sbatch --parsable --nodes=1 --ntasks-per-node=2 --chdir="$WORK/rjob" \
    "$top/scripts/slurm/tpbal-cpu.sbatch") || fail "sbatch refused the template (--repeat)"
wait_job "$job"
cat "$WORK/rjob/tpbal-$job.out"
for p in 1 2; do
    check_results "$WORK/rjob/results/slurm-$job/pass-$p" slurm 2 "$host"
done
grep -q '"passes_done": *2' "$WORK/rjob/results/slurm-$job/repeat.json" || fail "no repeat.json"
grep -q "^tpbal: tpbal-compare .* exited [013]$" "$WORK/rjob/tpbal-$job.out" ||
    fail "the template did not compare with its baseline"

# ---- the fleet template (its GPU and 8-CPU lines dropped, as a CPU site would): the fleet
# step (with --budget), then the training step on the nodes that passed
mkdir -p "$WORK/fjob"
sed '/--gpus-per-node/d; /--cpus-per-task/d' "$top/scripts/slurm/tpbal-fleet.sbatch" \
    >"$WORK/fleet.sbatch"
job=$(TPBAL="$TPBAL" TPBAL_BIND=none TPBAL_FLEET_ARGS="--shape 128x128x128 --fleet-bytes 256K --budget 20" \
    TRAIN="echo training-step-on" sbatch --parsable --nodes=1 --ntasks-per-node=2 \
    --chdir="$WORK/fjob" "$WORK/fleet.sbatch") || fail "sbatch refused the fleet template"
for _ in $(seq 300); do
    [ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && break
    sleep 0.5
done
[ -z "$(squeue -h -j "$job" 2>/dev/null)" ] ||
    { squeue -j "$job"; cat "$WORK/fjob/tpbal-fleet-$job.out"; fail "fleet job $job did not finish in 150 s"; }
cat "$WORK/fjob/tpbal-fleet-$job.out"
[ -s "$WORK/fjob/results/fleet-$job/fleet.json" ] || fail "the fleet step wrote no fleet.json"
"$PY" "$HERE/check_fleet.py" "$WORK/fjob/results/fleet-$job" || fail "check_fleet.py (the fleet job)"
grep -q '"budget": *{' "$WORK/fjob/results/fleet-$job/fleet.json" || fail "the fleet job's --budget left no trace"
# one node: it passes (the training step on its 2 tasks) or, when a rank of this noisy
# machine happened to run slow throughout, it is excluded and nothing is left to train on
if grep -q "^tpbal-fleet: excluded: none" "$WORK/fjob/tpbal-fleet-$job.out"; then
    [ "$(grep -c '^training-step-on' "$WORK/fjob/tpbal-fleet-$job.out")" -eq 2 ] ||
        fail "the training step did not run on the node's 2 tasks"
else
    grep -q "every node was excluded: no training step" "$WORK/fjob/tpbal-fleet-$job.out" ||
        fail "the fleet template neither trained nor said why"
fi

# ---- a graceful stop during a sweep, both launch paths of the template: the run ends within
# about 0.1 s of iterations, the config being measured dropped, recorded "interrupted" with its finished configs, and the
# template's report step runs whatever the exit. srun: scancel --signal=TERM reaches the
# step's ranks; mpirun: scancel --batch --signal=TERM reaches the batch shell, which passes
# it on (as --signal=B:TERM@60 does before the time limit).
shapes=$(seq -s, 16 16 960 | sed 's/\([0-9]*\)/\1x256x256/g')
graceful() { # LAUNCH SCANCEL-ARGS...
    local launch=$1 dir="$WORK/stop-$1"
    shift
    mkdir -p "$dir"
    job=$(TPBAL="$TPBAL" TPBAL_REPORT="${TPBAL_REPORT:-none}" TPBAL_LAUNCH="$launch" \
        TPBAL_ARGS="--tp 2 --policy even --split row --iters 300 --shape $shapes" \
        sbatch --parsable --nodes=1 --ntasks-per-node=2 --chdir="$dir" \
        "$top/scripts/slurm/tpbal-cpu.sbatch") || fail "sbatch refused the template ($launch)"
    res="$dir/results/slurm-$job"
    for _ in $(seq 600); do # until the first config is on disk
        grep -q '"type":"config"' "$res/results.jsonl" 2>/dev/null && break
        [ -n "$(squeue -h -j "$job" 2>/dev/null)" ] || break
        sleep 0.1
    done
    grep -q '"type":"config"' "$res/results.jsonl" 2>/dev/null ||
        { cat "$dir/tpbal-$job.out"; fail "job $job ($launch) wrote no config"; }
    echo "+ scancel $* $job"
    scancel "$@" "$job" || fail "scancel $* $job"
    for _ in $(seq 300); do
        [ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && break
        sleep 0.2
    done
    [ -z "$(squeue -h -j "$job" 2>/dev/null)" ] || fail "job $job did not end after the signal"
    cat "$dir/tpbal-$job.out"
    "$PY" - "$res" <<'PY' || fail "the stopped run's record ($launch)"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1] + "/results.jsonl")]
run = recs[0]
cfgs = [r for r in recs if r["type"] == "config"]
print("status %s after %d of 60 configs" % (run["status"], len(cfgs)))
assert run["status"] == "interrupted" and 1 <= len(cfgs) < 60, (run["status"], len(cfgs))
PY
    check_results "$res" fields
    grep -q "^tpbal: the sweep exited [1-9]" "$dir/tpbal-$job.out" || fail "no exit line ($launch)"
    if [ -n "${TPBAL_REPORT:-}" ] && "${TPB_PYTHON_MPL:-false}" -c "import matplotlib" 2>/dev/null; then
        [ -s "$res/report/index.html" ] || fail "the template wrote no report after the stop ($launch)"
    fi
}
graceful srun --signal=TERM
graceful mpirun --batch --signal=TERM

# ---- hostlists: tpbal expands them as scontrol does (several bracket groups, zero padding)
for list in "node[01-03,07]" "rack[1-2]-n[1-4]" "r[1,3]n[08-09],login" "gpu[8-10],a1"; do
    scontrol show hostnames "$list" >"$WORK/want" 2>/dev/null || fail "scontrol: $list"
    "${TPBAL_HOSTLIST:?}" "$list" >"$WORK/got" || fail "tpbal did not expand $list"
    cmp -s "$WORK/want" "$WORK/got" || fail "hostlist $list: scontrol gives $(tr '\n' ' ' \
        <"$WORK/want"), tpbal $(tr '\n' ' ' <"$WORK/got")"
done
for list in "a[1-2]b"; do # refused by both (a malformed "n[1-" scontrol prints as "n]")
    scontrol show hostnames "$list" 2>&1 | grep -q "Invalid hostlist" || fail "scontrol took $list"
    ! "${TPBAL_HOSTLIST:?}" "$list" >/dev/null || fail "tpbal took $list"
done
echo "slurm: 5 hostlists expanded (or refused) as scontrol show hostnames does"

# ---- srun without PMI: one line, exit 2, not two singleton runs
echo "+ srun -n 2 --mpi=none tpbal"
timeout 120 srun -n 2 --mpi=none "$TPBAL" --shape 32x32x32 >"$WORK/out" 2>"$WORK/err"
RC=$?
[ $RC -ne 0 ] || fail "srun --mpi=none ran"
[ "$(grep -c '^tpbal' "$WORK/err")" -eq 1 ] || { cat "$WORK/err"; fail "expected one tpbal line"; }
grep -q "srun started 2 tasks without a PMI" "$WORK/err" || fail "no PMI message"
[ ! -s "$WORK/out" ] || fail "tasks ran as singletons: $(head -3 "$WORK/out")"
echo "slurm: ok"
