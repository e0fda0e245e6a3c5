# layers.sh - the layering rules of src/ hold (scripts/check-layers) and no two
# translation units of the library use each other (scripts/check-links on the
# built archive); each checker also catches a planted violation: a copy of base/
# that includes run/, a file on top that includes run/'s private sweep state, a call to
# asprintf, and two objects that call each other.
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
rm "$tmp/base/bad.c" # ... and a file on top that includes run/'s private state
printf '#include "run/sweep.h"\n' >"$tmp/ok.c"
"$top/scripts/check-layers" "$tmp" || { echo "FAIL: check-layers refused run/sweep.h on top"; exit 1; }
printf '#include "run/sweep_state.h"\n' >"$tmp/bad.c"
if "$top/scripts/check-layers" "$tmp" 2>"$tmp/err"; then
    echo "FAIL: check-layers accepted run/sweep_state.h outside run/"
    exit 1
fi
grep -q "bad.c includes run/sweep_state.h, private to run/" "$tmp/err" ||
    { echo "FAIL: no message for the private header"; cat "$tmp/err"; exit 1; }
rm "$tmp/ok.c" "$tmp/bad.c"
printf 'int f(char **s) { return asprintf(s, "%%d", 1); }\n' >"$tmp/base/bad.c" # leaks LSan can't see
if "$top/scripts/check-layers" "$tmp" 2>"$tmp/err"; then
    echo "FAIL: check-layers accepted a call to asprintf"
    exit 1
fi
grep -q "base/bad.c calls asprintf" "$tmp/err" || { echo "FAIL: no message for asprintf"; cat "$tmp/err"; exit 1; }
rm "$tmp/base/bad.c"

lib=${TPBAL_LIB:?}
"$top/scripts/check-links" "$lib" || exit 1
mkdir -p "$tmp/objs"
printf 'int tpb_b(int);\nint tpb_a(int x) { return x ? tpb_b(x - 1) : 0; }\n' >"$tmp/objs/a.c"
printf 'int tpb_a(int);\nint tpb_b(int x) { return x ? tpb_a(x - 1) : 1; }\n' >"$tmp/objs/b.c"
printf 'int tpb_a(int);\nint tpb_c(void) { return tpb_a(3); }\n' >"$tmp/objs/c.c"
for f in a b c; do
    ${CC:-cc} -c -o "$tmp/objs/$f.o" "$tmp/objs/$f.c" || { echo "FAIL: cannot compile"; exit 1; }
done
if "$top/scripts/check-links" "$tmp/objs" 2>"$tmp/err"; then
    echo "FAIL: check-links accepted two objects that call each other"
    exit 1
fi
grep -q "circle between translation units: a.o uses b.o; b.o uses a.o" "$tmp/err" ||
    { echo "FAIL: the circle is not named"; cat "$tmp/err"; exit 1; }
grep -q "c.o" "$tmp/err" && { echo "FAIL: c.o (no circle) was named"; cat "$tmp/err"; exit 1; }
rm "$tmp/objs/b.o"
"$top/scripts/check-links" "$tmp/objs" >/dev/null || { echo "FAIL: no circle refused"; exit 1; }

# the test lists are the manifest's (scripts/gen-test-lists); a unit test left out of the
# sanitizer group without a reason is refused, and so is a flag naming a vendor the registry
# lacks; a registered vendor's tests go under its conditional
py=${PYTHON3:-python3}
"$py" "$top/scripts/gen-test-lists" --check || exit 1
mkdir -p "$tmp/gen/scripts" "$tmp/gen/tests" "$tmp/gen/src/backend"
cp "$top/scripts/gen-test-lists" "$tmp/gen/scripts/"
cp "$top/src/backend/vendors.inc" "$tmp/gen/src/backend/"
sed 's|^tests/test_partition .*|tests/test_partition c unit dist|' "$top/tests/manifest" \
    >"$tmp/gen/tests/manifest"
if "$py" "$tmp/gen/scripts/gen-test-lists" 2>"$tmp/err"; then
    echo "FAIL: gen-test-lists accepted a unit test without san or a reason"
    exit 1
fi
grep -q "test_partition: a unit test is in the sanitizer group (san) or says why" "$tmp/err" ||
    { echo "FAIL: gen-test-lists did not say why"; cat "$tmp/err"; exit 1; }
sed 's|^tests/test_partition .*|tests/test_partition c unit nosan=planted dist|' \
    "$top/tests/manifest" >"$tmp/gen/tests/manifest"
"$py" "$tmp/gen/scripts/gen-test-lists" || { echo "FAIL: a reason was not enough"; exit 1; }
grep -q "^SANITIZER_TESTS = tests/test_metrics " "$tmp/gen/tests/lists.inc" ||
    { echo "FAIL: the test without san stayed in the sanitizer group"; exit 1; }
# a vendor's flag: only a vendor of the registry, whose tests go under its conditional
sed 's|^tests/test_partition .*|tests/test_partition c unit san rocm|' "$top/tests/manifest" \
    >"$tmp/gen/tests/manifest"
if "$py" "$tmp/gen/scripts/gen-test-lists" 2>"$tmp/err"; then
    echo "FAIL: gen-test-lists took the flag of a vendor the registry lacks"
    exit 1
fi
grep -q "unknown flag 'rocm'" "$tmp/err" || { echo "FAIL: no line naming the flag"; cat "$tmp/err"; exit 1; }
echo "include src/backend/rocm/Makefile.inc" >>"$tmp/gen/src/backend/vendors.inc"
"$py" "$tmp/gen/scripts/gen-test-lists" || { echo "FAIL: a registered vendor's flag refused"; exit 1; }
sed -n '/^if TPB_HAVE_ROCM$/,/^endif$/p' "$tmp/gen/tests/lists.inc" >"$tmp/rocm"
grep -q "^VENDOR_UNIT_TESTS += tests/test_partition$" "$tmp/rocm" &&
    ! grep -q "^UNIT_C_TESTS = tests/test_partition" "$tmp/gen/tests/lists.inc" ||
    { echo "FAIL: a vendor's unit test is not under its conditional"; cat "$tmp/rocm"; exit 1; }
echo "layers: ok"
