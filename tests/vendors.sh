# vendors.sh - a GPU vendor is its folder, its m4 file and its line in the registry
# src/backend/vendors.inc, and nothing generic names one (scripts/check-vendors, on this
# tree and this build's tpb_config.h); the checker catches what it is for, each planted in
# a copy: a vendor's source named in Makefile.am, a registry line without its m4 file, a
# generic GPU file that calls a vendor's function, and a file of src/run/ that includes a
# vendor's header. (scripts/plant-vendor builds a planted vendor from scratch: by hand,
# doc/ARCHITECTURE.md.)
set -u
top=${TPBAL_SRCDIR:?}
"$top/scripts/check-vendors" "$top" "${TPBAL_BUILDDIR:?}/src/tpb_config.h" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fresh() {
    rm -rf "$tmp/t" && mkdir -p "$tmp/t/src/run"
    cp -r "$top/configure.ac" "$top/Makefile.am" "$top/config" "$tmp/t/"
    cp -r "$top/src/backend" "$tmp/t/src/"
    "$top/scripts/check-vendors" "$tmp/t" >"$tmp/out" || { echo "FAIL: the copy"; cat "$tmp/out"; exit 1; }
}
# expect WHAT PATTERN: the checker refuses the planted copy, naming PATTERN
expect() {
    if "$top/scripts/check-vendors" "$tmp/t" >"$tmp/out"; then
        echo "FAIL: check-vendors accepted $1"
        exit 1
    fi
    grep -q "$2" "$tmp/out" || { echo "FAIL: $1: no line naming $2"; cat "$tmp/out"; exit 1; }
    echo "vendors: refused $1: $(head -1 "$tmp/out")"
}
fresh
echo 'src_libtpbal_la_SOURCES += src/backend/cuda/cuda_extra.c' >>"$tmp/t/Makefile.am"
expect "a vendor's source in Makefile.am" "Makefile.am:.*names the vendor cuda"
fresh
echo 'include src/backend/ghost/Makefile.inc' >>"$tmp/t/src/backend/vendors.inc"
mkdir "$tmp/t/src/backend/ghost" && : >"$tmp/t/src/backend/ghost/Makefile.inc" &&
    : >"$tmp/t/src/backend/ghost/ghost_stub.c"
expect "a registry line without its m4 file" "config/tpb_ghost.m4 is missing"
fresh
printf 'void f(void) { tpb_cuda_blas_load(); }\n' >>"$tmp/t/src/backend/gpu/gpu_comm.c"
expect "a generic GPU file calling a vendor" "gpu_comm.c:.*names the vendor cuda"
fresh
printf '#include "backend/cuda/cuda_internal.h"\n' >"$tmp/t/src/run/x.c"
expect "src/run/ including a vendor's header" "src/run/x.c"
echo "vendors: ok"
