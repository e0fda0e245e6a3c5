/* test_inputs.c (3 ranks) - a seeded matrix drawn by all ranks together (each a share of its
 * rows, gathered) is bit for bit the matrix one process draws alone, on every rank, in every
 * input type; ranks that disagree on what they keep draw again together, and a matrix one
 * rank cannot keep is kept by none; the calibration's fill takes the kept matrix's first
 * elements; a large block of columns goes to the device in parts. */
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "base/clock.h"
#include "base/rng.h"
#include "run/inputs.h"
#include "tpb_test_mpi.h"

enum { ROWS = 37, COLS = 29 }; /* 37 rows: shares of 12, 12 and 13 on 3 ranks */

static int rank(void)
{
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

/* 1 on every rank where `mine` holds on every rank. */
static int everywhere(int mine)
{
    int all;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

static tpb_device_t *open_host(void)
{
    static const tpb_clock_t clock = {0};
    int r, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    tpb_backend_args_t a = {.world = MPI_COMM_WORLD,
                            .world_rank = r,
                            .world_size = n,
                            .local_rank = r,
                            .local_size = n,
                            .cfg = {.dtype = TPB_DTYPE_FP64, .bind = TPB_BIND_NONE},
                            .clock = &clock,
                            .emulate_factor = 1.0};
    tpb_device_t *dev = NULL;
    ck_assert_int_eq(tpb_backend_host.open(&a, &dev), TPB_OK);
    return dev;
}

static tpb_inputs_block_t matrix(tpb_dtype_t dt, uint64_t seed)
{
    return (tpb_inputs_block_t){
        .rows = ROWS, .cols = COLS, .seed = seed, .id = 2, .scale = 0.25, .dtype = dt};
}

/* Whether block (r0, c0, nr x nc) of m, filled through dev, is the alone-drawn one's. */
static int block_is_drawn(tpb_device_t *dev, tpb_inputs_block_t m, long r0, long c0, long nr,
                          long nc)
{
    size_t esz = tpb_dtype_in_size(m.dtype);
    unsigned char *got = malloc((size_t)(nr * nc) * esz), *want = malloc((size_t)(nr * nc) * esz);
    m.r0 = r0, m.c0 = c0, m.nr = nr, m.nc = nc;
    int same = got && want && tpb_inputs_fill(dev, got, &m) == TPB_OK &&
               tpb_rng_encode(want, nr, nc, r0, c0, m.seed, m.id, m.scale, m.dtype, 1) == TPB_OK &&
               memcmp(got, want, (size_t)(nr * nc) * esz) == 0;
    free(got);
    free(want);
    return same;
}

START_TEST(drawn_together_equals_drawn_alone)
{
    tpb_device_t *dev = open_host();
    const tpb_dtype_t dts[] = {TPB_DTYPE_FP64, TPB_DTYPE_FP32, TPB_DTYPE_BF16, TPB_DTYPE_FP8};
    int ok = 1;
    for (size_t i = 0; i < sizeof(dts) / sizeof(dts[0]); i++) {
        tpb_inputs_block_t m = matrix(dts[i], 11 + i);
        tpb_inputs_drawn_s();
        ok &= tpb_inputs_prepare(MPI_COMM_WORLD, &m, 1) == TPB_OK;
        ok &= tpb_inputs_drawn_s() > 0.0;               /* drawn now, its share here */
        ok &= block_is_drawn(dev, m, 0, 0, ROWS, COLS); /* every row, every rank's share */
        ok &= block_is_drawn(dev, m, 11, 3, 14, 17);    /* across the shares' boundaries */
        ok &= tpb_inputs_drawn_s() == 0.0;              /* copied out of the kept matrix */
        ok &= tpb_inputs_prepare(MPI_COMM_WORLD, &m, 1) == TPB_OK;
        ok &= tpb_inputs_drawn_s() == 0.0; /* kept on every rank: nothing drawn again */
    }
    tpb_inputs_free();
    tpb_dev_close(dev);
    ck_assert(everywhere(ok));
}
END_TEST

START_TEST(a_rank_without_it_draws_with_all)
{
    tpb_device_t *dev = open_host();
    tpb_inputs_block_t m = matrix(TPB_DTYPE_FP32, 7);
    int ok = tpb_inputs_prepare(MPI_COMM_WORLD, &m, 1) == TPB_OK;
    if (rank() == 1)
        tpb_inputs_free(); /* rank 1 no longer keeps it */
    tpb_inputs_drawn_s();
    ok &= tpb_inputs_prepare(MPI_COMM_WORLD, &m, 1) == TPB_OK;
    ok &= tpb_inputs_drawn_s() > 0.0; /* every rank drew its share again, not rank 1 alone */
    ok &= block_is_drawn(dev, m, 0, 0, ROWS, COLS);
    tpb_inputs_free();
    tpb_dev_close(dev);
    ck_assert(everywhere(ok));
}
END_TEST

START_TEST(kept_by_none_where_one_cannot)
{
    tpb_device_t *dev = open_host();
    tpb_inputs_block_t m = matrix(TPB_DTYPE_FP64, 9);
    if (rank() == 2)
        tpb_inputs_share(1 << 30); /* rank 2's budget: a few bytes, not the matrix */
    tpb_inputs_drawn_s();
    int ok = tpb_inputs_prepare(MPI_COMM_WORLD, &m, 1) == TPB_OK;
    ok &= tpb_inputs_drawn_s() == 0.0; /* no share drawn: nobody keeps it */
    ok &= block_is_drawn(dev, m, 2, 5, 20, 9);
    ok &= tpb_inputs_drawn_s() > 0.0; /* each rank drew its block alone */
    tpb_inputs_share(1);
    tpb_inputs_free();
    tpb_dev_close(dev);
    ck_assert(everywhere(ok));
}
END_TEST

/* Whether fill_any of (r0, c0, nr x nc) of m wrote the first nr x nc elements of the matrix
 * (first = 1) or the block itself (first = 0), as drawn alone. */
static int any_is(tpb_device_t *dev, tpb_inputs_block_t m, long r0, long c0, long nr, long nc,
                  int first)
{
    size_t esz = tpb_dtype_in_size(m.dtype), n = (size_t)(nr * nc);
    unsigned char *got = malloc(n * esz), *all = malloc((size_t)(ROWS * COLS) * esz),
                  *want = malloc(n * esz);
    m.r0 = r0, m.c0 = c0, m.nr = nr, m.nc = nc;
    int same = got && all && want && tpb_inputs_fill_any(dev, got, &m) == TPB_OK &&
               tpb_rng_encode(all, ROWS, COLS, 0, 0, m.seed, m.id, m.scale, m.dtype, 1) == TPB_OK &&
               tpb_rng_encode(want, nr, nc, r0, c0, m.seed, m.id, m.scale, m.dtype, 1) == TPB_OK &&
               memcmp(got, first ? all : want, n * esz) == 0;
    free(got);
    free(all);
    free(want);
    return same;
}

/* The calibration's fill (nobody checks its product): a kept matrix's first elements in one
 * copy, nothing drawn; where none keeps it, the block, drawn. */
START_TEST(any_elements_of_the_kept_matrix)
{
    tpb_device_t *dev = open_host();
    tpb_inputs_block_t m = matrix(TPB_DTYPE_BF16, 5);
    int ok = tpb_inputs_prepare(MPI_COMM_WORLD, &m, 1) == TPB_OK;
    tpb_inputs_drawn_s();
    ok &= any_is(dev, m, 0, 3, 20, 13, 1); /* a block of columns: not packed, the first 260 */
    ok &= tpb_inputs_drawn_s() == 0.0;
    tpb_inputs_free();
    tpb_inputs_share(1 << 30); /* nothing kept: the block itself */
    ok &= any_is(dev, m, 2, 3, 20, 13, 0);
    ok &= tpb_inputs_drawn_s() > 0.0;
    tpb_inputs_share(1);
    tpb_inputs_free();
    tpb_dev_close(dev);
    ck_assert(everywhere(ok));
}
END_TEST

/* A block of columns larger than the buffer it is packed through (16 MiB: in parts, the last
 * one short), copied out of the kept matrix and, where nothing is kept, drawn part by part:
 * each part at its own rows. */
START_TEST(a_large_block_in_parts)
{
    tpb_device_t *dev = open_host();
    tpb_inputs_block_t m = matrix(TPB_DTYPE_FP64, 3);
    m.rows = 3000, m.cols = 1500; /* a 2900 x 1000 block: 23.2 MB, two parts */
    int ok = tpb_inputs_prepare(MPI_COMM_WORLD, &m, 1) == TPB_OK;
    ok &= block_is_drawn(dev, m, 57, 333, 2900, 1000);
    tpb_inputs_free();
    tpb_inputs_share(1 << 30); /* nothing kept */
    ok &= tpb_inputs_prepare(MPI_COMM_WORLD, &m, 1) == TPB_OK;
    ok &= block_is_drawn(dev, m, 57, 333, 2900, 1000);
    tpb_inputs_share(1);
    tpb_inputs_free();
    tpb_dev_close(dev);
    ck_assert(everywhere(ok));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("inputs");
    TCase *tc = tcase_create("mpi");
    tcase_add_test(tc, drawn_together_equals_drawn_alone);
    tcase_add_test(tc, a_rank_without_it_draws_with_all);
    tcase_add_test(tc, kept_by_none_where_one_cannot);
    tcase_add_test(tc, any_elements_of_the_kept_matrix);
    tcase_add_test(tc, a_large_block_in_parts);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MPI_MAIN(suite)
