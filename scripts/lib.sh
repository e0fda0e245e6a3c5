# scripts/lib.sh - shared by quickstart and test: build tpbal out of tree.
# Sourced, not run. Sets TOP and BUILD.
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${TPBAL_BUILD_DIR:-$TOP/build}
JOBS=$(nproc 2>/dev/null || echo 2)

# Open MPI refuses root without these; tests and quickstart run as root in CI.
mpi_env() {
    if [[ $(id -u) -eq 0 ]]; then
        export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    fi
    export OMPI_MCA_rmaps_base_oversubscribe=${OMPI_MCA_rmaps_base_oversubscribe:-1}
}

# build_tpbal [configure args...]: autoreconf when needed, configure once, make.
build_tpbal() {
    "$TOP/scripts/deps"
    if [[ ! -x "$TOP/configure" || "$TOP/configure.ac" -nt "$TOP/configure" ]]; then
        (cd "$TOP" && autoreconf -fi >/dev/null 2>&1) || (cd "$TOP" && autoreconf -fi)
    fi
    mkdir -p "$BUILD"
    if [[ ! -f "$BUILD/config.status" || "$TOP/configure" -nt "$BUILD/config.status" ]]; then
        (cd "$BUILD" && "$TOP/configure" "$@" >configure.out 2>&1) || {
            cat "$BUILD/configure.out" >&2
            echo "tpbal: configure failed (log above)" >&2
            return 1
        }
        sed -n '/configuration summary/,$p' "$BUILD/configure.out"
    fi
    make -C "$BUILD" -j"$JOBS" >"$BUILD/make.out" 2>&1 || {
        tail -40 "$BUILD/make.out" >&2
        echo "tpbal: build failed (see $BUILD/make.out)" >&2
        return 1
    }
}
