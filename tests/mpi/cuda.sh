# cuda.sh - the CUDA backend without a GPU: --backend cuda fails cleanly on
# every rank (exit 2, one line), --backend auto falls back to the host. On a
# machine with a GPU it runs a small checked sweep instead.
. "$(dirname "$0")/lib.sh"

gpus=$("$TPBAL" --version | sed -n 's/^backend cuda: built, \([0-9]*\) device.*/\1/p')
if [ "${gpus:-0}" -gt 0 ]; then
    tpbal 1 --backend cuda --tp 1 --shape 256x512x512 --dtype fp32 --check --iters 5 \
        --out "$WORK/gpu"
    expect_rc 0
    check_results "$WORK/gpu" all-pass
    echo "cuda: ok (GPU run)"
    exit 0
fi

tpbal 2 --backend cuda --iters 2
expect_rc 2
one_error_line "$*"
if "$TPBAL" --version | grep -q "^backend cuda: built"; then
    grep -q "^tpbal: error: --backend cuda: no GPU is visible" "$WORK/err" || fail "message"
else
    grep -q "^tpbal: error: --backend cuda: this tpbal was built without" "$WORK/err" ||
        fail "message"
fi
tpbal 2 --backend auto --shape 32x32x32 --iters 2
expect_rc 0
grep -q "backend host" "$WORK/out" || fail "auto did not fall back to host"
echo "cuda: ok (no GPU: clean failure and host fallback)"
