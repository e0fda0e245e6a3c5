# bundle.sh - scripts/gpu-bundle's tree runs where nothing tpbal needs is installed: built from
# this build (at most 48 MiB), it is run in a mount namespace where every file of the system's
# Open MPI, PMIx, hwloc, OpenBLAS, Check, autotools, libstdc++ and libgcc_s is hidden
# (/dev/null bound over it; the system's mpirun and this build's tpbal must then fail; the GPU
# image's libstdc++ is newer than the bundle's glibc can load): the bundle's mpirun runs two
# ranks of its tpbal with --check, its prebuilt CUDA unit tests pass (no GPU needed), its
# tpbal-compare runs, and its bench/gpu-check.sh --standin runs every step of the GPU check on
# the bundle's GPU stand-in and passes (gpucheck.sh runs the dry run from the source tree).
# It runs beside the suite's other tests: the rehearsal is told so (GPU_CHECK_LOADED=1: its
# timing figures printed, not judged, the budgets x4); what it checks is that every program
# of the check runs from the bundle, and gpucheck-figures.sh judges the figures, alone.
# So a library missing from the bundle shows up here, not on the GPU machine. Then the bundle
# is made again over itself: what it did not make stays; a link or a foreign folder is refused.
. "$(dirname "$0")/lib.sh"
top=${TPBAL_SRCDIR:?}
build=$(cd "$(dirname "$TPBAL")/.." && pwd)
"$TPBAL" --version | grep -q "^backend cuda: built" ||
    { echo "SKIP: tpbal was built without CUDA (the bundle is for a GPU machine)"; exit 77; }
if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null || ! command -v dpkg >/dev/null; then
    echo "SKIP: hiding the system's libraries needs root, unshare and dpkg"
    exit 77
fi
echo "+ scripts/gpu-bundle $WORK/b $build"
"$top/scripts/gpu-bundle" "$WORK/b" "$build" >"$WORK/out" 2>&1 || fail "scripts/gpu-bundle failed"
cat "$WORK/out"
size=$(du -sm "$WORK/b" | cut -f1)
[ "$size" -le 48 ] || fail "the bundle is $size MiB (at most 48)"

pkgs="libopenmpi3 openmpi-bin openmpi-common libpmix2 libhwloc15 hwloc libhwloc-dev
      libopenblas0-pthread libopenblas-pthread-dev check libsubunit0 autoconf automake libtool
      libstdc++6 libgcc-s1"
# shellcheck disable=SC2086
dpkg -L $pkgs 2>/dev/null | grep -v '^/usr/share/\(doc\|man\)/' | while read -r f; do
    if [ -f "$f" ] && [ ! -L "$f" ]; then echo "$f"; fi
done >"$WORK/hide"
n=$(wc -l <"$WORK/hide")
[ "$n" -gt 300 ] || fail "only $n files of $pkgs to hide: not the packages this test knows"
echo "hiding $n files of: $(echo $pkgs)"
cat >"$WORK/inside.sh" <<'EOF'
set -u
while read -r f; do mount --bind /dev/null "$f" || { echo "cannot hide $f"; exit 3; }; done <"$HIDE"
say() { echo "bundle: $*"; }
if mpirun --version >/dev/null 2>&1; then say "FAIL: the system's mpirun still runs"; exit 4; fi
if "$TPBAL" --version >/dev/null 2>&1; then say "FAIL: this build's tpbal still runs"; exit 4; fi
if autoreconf --version >/dev/null 2>&1; then say "FAIL: autoreconf still runs"; exit 4; fi
say "the system's Open MPI, hwloc, OpenBLAS, Check and autotools are hidden"
"$B/bin/tpbal" --version || { say "FAIL: tpbal --version"; exit 5; }
"$B/bin/mpirun" -np 2 "$B/bin/tpbal" --backend host --tp 1,2 --shape 64x256x256 --iters 6 \
    --check --out "$D/run" || { say "FAIL: mpirun -np 2 tpbal --check"; exit 6; }
for t in test_peak test_cuda_plan test_cuda_errors; do
    "$B/tests/$t" || { say "FAIL: $t"; exit 7; }
done
"$B/bin/tpbal-compare" "$D/run" "$D/run" >/dev/null || { say "FAIL: tpbal-compare"; exit 8; }
# the rehearsal as a lent machine runs it: the lease's one script, which runs the check
OUT="$D/lease" GPU_CHECK_LOADED=1 DEADLINE=900 bash "$B/bench/gpu-lease.sh" --standin \
    >"$D/gcs.out" 2>&1 ||
    { grep -E '^[a-z0-9.-]+: (FAIL|TIMEOUT)' "$D/gcs.out"; tail -20 "$D/gcs.out"
      say "FAIL: gpu-lease.sh --standin"; exit 10; }
say "ok"
EOF
RC=0
HIDE="$WORK/hide" B="$WORK/b" D="$WORK" TPBAL="$TPBAL" timeout 1000 \
    unshare -m --propagation private bash "$WORK/inside.sh" >"$WORK/in.out" 2>&1 || RC=$?
cat "$WORK/in.out"
[ "$RC" -eq 0 ] || fail "the bundle in a namespace without the system's libraries: exit $RC"
grep -q "^bundle: ok$" "$WORK/in.out" || fail "the namespace's checks did not finish"
# no PMIx banner from the bundle's mpirun (the GPU image's: 12 lines at every launch)
G="$WORK/lease/check" # gpu-check's folder in the lease's
if { cat "$WORK/in.out" "$WORK/gcs.out"; tar -xzOf "$G/details.tar.gz" --wildcards 'run/*.txt'; } |
    grep -qi "usable compression library"; then
    fail "the bundle's mpirun printed PMIx's compression banner"
fi
cat "$G/summary.txt"
steps=$(grep -cE '^[a-z0-9.-]+: pass' "$G/summary.txt")
[ "$steps" -eq 31 ] || fail "the bundle's rehearsal passed $steps steps (31 expected)"
grep -q "every step passed" "$G/summary.txt" || fail "a step of the bundle's rehearsal failed"
grep -q "^# loaded (GPU_CHECK_LOADED=1)" "$G/summary.txt" || fail "the rehearsal did not say it was loaded"
# what a lent machine hands back: at most 8 files, at most 2 folders down
n=$(find "$WORK/lease" -type f | wc -l)
[ "$n" -eq 6 ] && [ -z "$(find "$WORK/lease" -mindepth 3)" ] ||
    fail "the lease left $n files (6: lease.txt, torch.txt, check/'s 3 and its marker)"
grep -q "^torch: not measured: the rehearsal" "$WORK/lease/torch.txt" ||
    fail "torch.txt: $(head -1 "$WORK/lease/torch.txt")"
grep -q "^lease: gpu-check ended with status 0" "$WORK/lease/lease.txt" ||
    fail "lease.txt: no gpu-check status"
cmp -s <(grep -v '^lease: ' "$WORK/lease/lease.txt" | grep -E '^[a-z0-9.-]+: pass') \
    <(grep -E '^[a-z0-9.-]+: pass' "$G/summary.txt") || fail "lease.txt does not hold the check's lines"

# made again over itself: its own entries replaced, a user's folder and file kept
mkdir -p "$WORK/b/gpu-check-out" && echo mine >"$WORK/b/gpu-check-out/keep"
echo mine >"$WORK/b/NOTES"
"$top/scripts/gpu-bundle" "$WORK/b" "$build" >"$WORK/out2" 2>&1 || { cat "$WORK/out2"; fail "gpu-bundle over a bundle"; }
[ "$(cat "$WORK/b/gpu-check-out/keep")" = mine ] && [ "$(cat "$WORK/b/NOTES")" = mine ] ||
    fail "gpu-bundle over a bundle removed what it did not make"
"$WORK/b/bin/tpbal" --version >/dev/null || fail "the remade bundle does not run"
[ -z "$(find "$WORK/b" -maxdepth 1 -name '.stage.*')" ] || fail "a stage folder was left"
# the folders follow the umask (022 here: 755), not 0700
mode=$(stat -c %a "$WORK/b/bin")
[ "$mode" = "$(printf '%o' $((0777 & ~0$(umask))))" ] || fail "bundle folder mode $mode, umask $(umask)"
# refused: a symbolic link as DIR (its target untouched), a folder that is not a bundle
mkdir -p "$WORK/target" && echo mine >"$WORK/target/f" && ln -s "$WORK/target" "$WORK/link"
if "$top/scripts/gpu-bundle" "$WORK/link" "$build" >"$WORK/out3" 2>&1; then fail "a link as DIR accepted"; fi
grep -q "symbolic link" "$WORK/out3" || { cat "$WORK/out3"; fail "a link as DIR: no clear error"; }
if "$top/scripts/gpu-bundle" "$WORK/target" "$build" >"$WORK/out4" 2>&1; then fail "a foreign folder accepted"; fi
grep -q "not a bundle" "$WORK/out4" || { cat "$WORK/out4"; fail "a foreign folder: no clear error"; }
[ "$(ls -A "$WORK/target")" = f ] || fail "a refused DIR was changed"
echo "bundle: ok ($size MiB)"
