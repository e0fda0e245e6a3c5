# layers.sh - the layering rules of src/ hold (scripts/check-layers), and the
# checker itself catches a violation (a copy of base/ that includes run/).
set -u
top=${TPBAL_SRCDIR:?}
"$top/scripts/check-layers" "$top/src" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/base"
printf '#include "run/sweep.h"\n' >"$tmp/base/bad.c"
if "$top/scripts/check-layers" "$tmp" 2>"$tmp/err"; then
    echo "FAIL: check-layers accepted base/ including run/"
    exit 1
fi
grep -q "not allowed" "$tmp/err" || { echo "FAIL: no message"; cat "$tmp/err"; exit 1; }
echo "layers: ok"
