# dispatch.sh - a new collective kind, verdict or dtype fails the plain build (./configure
# && make: the default warning flags of config/tpb_warnings.m4, no --enable-werror) at every
# place that dispatches or words it (issues 41 and 58). Each is a row of an X-macro registry
# (TPB_COLLS, TPB_VERDICTS, TPB_DTYPES); the places that must act on a new row are switches
# without a default, and -Werror=switch-enum names each one that lacks it. The files compile
# cleanly as they are; with a copy of the header that adds a PLANTED row before them on the
# include path, each must fail and name it. The registries themselves (names, sizes) take the
# row as it is: their _Static_asserts count rows. The CUDA backend's files are compiled where
# the toolkit's headers are (CUDA builds).
set -u
top=${TPBAL_SRCDIR:?}
flags=${TPBAL_CPPFLAGS:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the default build's warning flags, as configure sets them without --enable-werror
warn=$(sed -n 's/^ *TPB_WARN_CFLAGS="\([^"$]*\)"$/\1/p' "$top/config/tpb_warnings.m4")
case "$warn" in *-Werror=switch-enum*) ;; *)
    echo "FAIL: the default warning flags ($warn) do not make a missing enum case an error"
    exit 1
    ;;
esac
cuda=0
grep -q "define TPB_HAVE_CUDA 1" "${TPBAL_BUILDDIR:?}/src/tpb_config.h" && cuda=1
[ $cuda = 1 ] || echo "dispatch: a build without CUDA: src/backend/cuda/ not compiled"

# plant HEADER ROW_PATTERN NEW_ROW ENUM FILES...: each file fails with the planted row
plant() {
    local header=$1 row=$2 new=$3 name=$4
    shift 4
    rm -rf "$tmp/inc" && mkdir -p "$tmp/inc/base"
    sed "s/^\\( *$row\\)\$/\\1 $new/" "$top/src/$header" >"$tmp/inc/$header"
    grep -q "X(PLANTED" "$tmp/inc/$header" || { echo "FAIL: could not plant $name"; exit 1; }
    for f in "$@"; do
        case $f in src/backend/cuda/*) [ $cuda = 1 ] || continue ;; esac
        # shellcheck disable=SC2086 # the flags are words
        ${CC:-cc} -std=c11 $warn -fsyntax-only $flags "$top/$f" 2>"$tmp/err" ||
            { echo "FAIL: $f does not compile as it is"; cat "$tmp/err"; exit 1; }
        # shellcheck disable=SC2086
        if ${CC:-cc} -std=c11 $warn -fsyntax-only -I"$tmp/inc" $flags "$top/$f" 2>"$tmp/err"; then
            echo "FAIL: $f compiles with $name, which it does not handle"
            exit 1
        fi
        grep -q "$name" "$tmp/err" ||
            { echo "FAIL: $f failed without naming $name"; cat "$tmp/err"; exit 1; }
        echo "dispatch: $f refuses $name"
    done
    # the registry takes the row: its file compiles with it
    for f in $REGISTRY; do
        # shellcheck disable=SC2086
        ${CC:-cc} -std=c11 $warn -fsyntax-only -I"$tmp/inc" $flags "$top/$f" 2>"$tmp/err" ||
            { echo "FAIL: the registry $f does not take a new row"; cat "$tmp/err"; exit 1; }
    done
}

REGISTRY=src/base/types.c plant base/tpb_types.h 'X(REDUCE_SCATTER, "reducescatter", "reduce-scatter")' \
    'X(PLANTED, "planted", "planted")' TPB_COLL_PLANTED \
    src/run/coll.c src/backend/host/host_comm.c src/backend/gpu/gpu_comm.c \
    src/backend/gpu/gpu_staging.c \
    src/backend/cuda/cuda_comm.c
REGISTRY=src/base/interval.c plant base/interval.h 'X(DISTURBED, "disturbed")' \
    'X(PLANTED, "planted")' TPB_VERDICT_PLANTED src/record/answer_text.c
# dtype.c holds the registry and the conversions, which must fail
REGISTRY= plant base/dtype.h 'X(FP8, "fp8", 1, BF16, 16, 2e-2)' \
    'X(PLANTED, "planted", 4, FP32, 1, 1e-4)' TPB_DTYPE_PLANTED src/base/dtype.c \
    src/backend/cuda/cuda_comm.c src/backend/cuda/cuda_gemm.c src/backend/cuda/cuda_plan.c
echo "dispatch: ok"
