# standin-lib.sh - sourced by standin.sh and standin-timing.sh: the GPU stand-in set up
# in front of mpirun (tests/standin/run), its statistics folder, and the checks both use.
. "$(dirname "$0")/lib.sh"
build=$(cd "$(dirname "$TPBAL")/.." && pwd)
SI="$build/tests/standin/run"
"$TPBAL" --version | grep -q "^backend cuda: built" ||
    { echo "SKIP: tpbal was built without CUDA (the stand-in runs the CUDA backend)"; exit 77; }
[ -x "$SI" ] || fail "no $SI: make check builds the stand-in in a CUDA build"
PLAIN_MPIRUN=$MPIRUN
MPIRUN="$SI $MPIRUN"
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export TPBAL_STANDIN_STATS="$WORK/stats"
ST="$PY $HERE/check_standin.py"

fresh() { rm -rf "$WORK/stats" "$WORK/r" && mkdir "$WORK/stats"; }
# clean: tpbal ended 0, the stand-in saw no misuse (on stderr and in its counts)
clean() {
    expect_rc 0
    if grep -q "^tpbal-standin:" "$WORK/err"; then
        grep "^tpbal-standin:" "$WORK/err" | head -5
        fail "the stand-in reported a misuse of the CUDA, cuBLASLt or NCCL API"
    fi
    $ST stats "$WORK/stats" complaints eq 0 >/dev/null || fail "stand-in complaints counted"
}

