# dispatch.sh - a new kind of collective fails the build wherever a collective is dispatched
# (issue 41): each backend's dispatch (the GPU layer's staging and its group of one, NCCL's
# post) and the names in base/types.c are switches without a
# default, so -Wswitch (in -Wall) -Werror names every one that lacks the new kind. The
# files compile cleanly as they are; with a copy of base/tpb_types.h that adds
# TPB_COLL_PLANTED before them on the include path, each must fail and name it. The CUDA
# backend's file is compiled where the toolkit's headers are (CUDA builds).
set -u
top=${TPBAL_SRCDIR:?}
flags=${TPBAL_CPPFLAGS:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/base"
sed 's/TPB_COLL_REDUCE_SCATTER }/TPB_COLL_REDUCE_SCATTER, TPB_COLL_PLANTED }/' \
    "$top/src/base/tpb_types.h" >"$tmp/base/tpb_types.h"
grep -q TPB_COLL_PLANTED "$tmp/base/tpb_types.h" || { echo "FAIL: could not plant a kind"; exit 1; }
files="src/backend/host/host_comm.c src/backend/gpu/gpu_comm.c src/backend/gpu/gpu_staging.c src/base/types.c"
if grep -q "define TPB_HAVE_CUDA 1" "${TPBAL_BUILDDIR:?}/src/tpb_config.h"; then
    files="$files src/backend/cuda/cuda_comm.c"
else
    echo "dispatch: a build without CUDA: src/backend/cuda/cuda_comm.c not compiled"
fi
for f in $files; do
    # shellcheck disable=SC2086 # the flags are words
    ${CC:-cc} -std=c11 -Wall -Werror -fsyntax-only $flags "$top/$f" 2>"$tmp/err" ||
        { echo "FAIL: $f does not compile as it is"; cat "$tmp/err"; exit 1; }
    # shellcheck disable=SC2086
    if ${CC:-cc} -std=c11 -Wall -Werror -fsyntax-only -I"$tmp" $flags "$top/$f" 2>"$tmp/err"; then
        echo "FAIL: $f compiles with a collective kind it does not dispatch"
        exit 1
    fi
    grep -q "TPB_COLL_PLANTED" "$tmp/err" ||
        { echo "FAIL: $f failed without naming the planted kind"; cat "$tmp/err"; exit 1; }
    echo "dispatch: $f refuses a collective kind it does not handle"
done
echo "dispatch: ok"
