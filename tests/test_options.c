/* test_options.c - command-line parsing and resolution, presets. */
#include <stdlib.h>
#include <string.h>

#include "cli/options.h"
#include "base/suggest.h"
#include "cli/preset.h"
#include "tpb_test.h"

static tpb_options_t o;

static tpb_status_t parse(const char *line)
{
    char buf[1024], *argv[64];
    int argc = 0;
    snprintf(buf, sizeof(buf), "tpbal %s", line);
    for (char *t = strtok(buf, " "); t && argc < 63; t = strtok(NULL, " "))
        argv[argc++] = t;
    argv[argc] = NULL;
    tpb_options_free(&o);
    tpb_options_init(&o);
    return tpb_options_parse(&o, argc, argv);
}

static tpb_status_t parse_resolve(const char *line, int world)
{
    tpb_status_t st = parse(line);
    if (st == TPB_OK)
        st = tpb_options_load_cost(&o);
    if (st != TPB_OK)
        return st;
    st = tpb_options_resolve(&o, world, &tpb_backend_host);
    tpb_backend_cfg_t cfg;
    if (st == TPB_OK)
        tpb_options_backend_cfg(&o, &cfg);
    return st == TPB_OK ? tpb_backend_host.check_config(&cfg) : st;
}

static void assert_error(tpb_status_t st, const char *needle)
{
    ck_assert_int_eq(st, TPB_ERR_INVALID);
    ck_assert_msg(strstr(tpb_err_msg(), needle), "message '%s' lacks '%s'", tpb_err_msg(), needle);
    ck_assert(!strchr(tpb_err_msg(), '\n'));
}

START_TEST(defaults)
{
    ck_assert_int_eq(parse_resolve("", 8), TPB_OK);
    ck_assert_int_eq(o.ntp, 4); /* 1 2 4 8 */
    ck_assert_int_eq(o.tp[3], 8);
    ck_assert_str_eq(o.notes, ""); /* a power of 2: every degree up to the world */
    ck_assert_uint_eq(o.splits, TPB_SPLIT_ROW | TPB_SPLIT_COL);
    ck_assert_uint_eq(o.policies, TPB_POLICY_EVEN | TPB_POLICY_WEIGHTED);
    ck_assert_int_eq(o.nshapes, 1);
    ck_assert_int_eq(o.shapes[0].m, 1024);
    ck_assert_int_eq(o.iters, 20);
    ck_assert_int_eq(o.granularity, 1);
    ck_assert_int_eq(o.timeline, 1);
    ck_assert_int_eq(parse_resolve("", 6), TPB_OK);
    ck_assert_int_eq(o.ntp, 2); /* 1 2 */
    ck_assert_str_eq(o.notes, "no --tp: TP 1,2, the powers of 2 that divide the 6 ranks (--tp 6 "
                              "for one group of all)");
}
END_TEST

START_TEST(full_command_line)
{
    ck_assert_int_eq(parse_resolve("--tp 1,2 --split col --policy weighted -m 64,128 -n 256 "
                                   "-k 32 --dtype fp64 --iters 7 --warmup=0 --speeds 1,0.5 "
                                   "--emulate-speed 1,0.5 --granularity 8 --check --out /tmp/x "
                                   "--col-collective allreduce --inject-delay 1:2000:10 "
                                   "--inject-clock-offset 1:-50000 --timeline off --seed 7 -q",
                                   2),
                     TPB_OK);
    ck_assert_int_eq(o.ntp, 2);
    ck_assert_uint_eq(o.splits, TPB_SPLIT_COL);
    ck_assert_uint_eq(o.policies, TPB_POLICY_WEIGHTED);
    ck_assert_int_eq(o.nshapes, 2);
    ck_assert_int_eq(o.shapes[1].m, 128);
    ck_assert_int_eq(o.shapes[1].n, 256);
    ck_assert_int_eq(o.shapes[1].k, 32);
    ck_assert_int_eq(o.dtype, TPB_DTYPE_FP64);
    ck_assert_int_eq(o.iters, 7);
    ck_assert_int_eq(o.warmup, 0);
    ck_assert_double_eq(o.speeds[1], 0.5);
    ck_assert_double_eq(o.emulate[1], 0.5);
    ck_assert_int_eq(o.granularity, 8);
    ck_assert_int_eq(o.check, 1);
    ck_assert_str_eq(o.out_dir, "/tmp/x");
    ck_assert_int_eq(o.col_collective, TPB_COLL_ALLREDUCE);
    ck_assert_int_eq(o.inject_delay.rank, 1);
    ck_assert_double_eq(o.inject_delay.us, 2000);
    ck_assert_int_eq(o.inject_delay.every, 10);
    ck_assert_double_eq(o.inject_clock.us, -50000);
    ck_assert_int_eq(o.timeline, 0);
    ck_assert_int_eq(o.seed, 7);
    ck_assert_int_eq(o.quiet, 1);
}
END_TEST

START_TEST(shapes)
{
    ck_assert_int_eq(parse_resolve("--shape 8x16x32,1x2x3", 1), TPB_OK);
    ck_assert_int_eq(o.nshapes, 2);
    ck_assert_int_eq(o.shapes[0].n, 16);
    ck_assert_int_eq(o.shapes[1].k, 3);
    ck_assert_int_eq(parse_resolve("-m 2,4 -k 8,16,32", 1), TPB_OK);
    ck_assert_int_eq(o.nshapes, 6);
    ck_assert_int_eq(o.shapes[5].m, 4);
    ck_assert_int_eq(o.shapes[5].n, 1024);
    ck_assert_int_eq(o.shapes[5].k, 32);
    assert_error(parse("--shape 8x16"), "--shape '8x16'");
    assert_error(parse("--shape 8x0x4"), "MxNxK");
    assert_error(parse_resolve("--shape 8x8x8 -m 4", 1), "-m/-n/-k and --shape");
}
END_TEST

START_TEST(bad_input)
{
    assert_error(parse("--frobnicate"), "unknown option '--frobnicate'");
    assert_error(parse("-z"), "unknown option '-z'");
    /* a fleet option without --fleet is refused at any value, the default's included */
    assert_error(parse_resolve("--fleet-threshold 0.9", 2), "need --fleet");
    assert_error(parse_resolve("--fleet-bytes 16M", 2), "need --fleet");
    ck_assert_int_eq(parse_resolve("--fleet --fleet-threshold 0.9", 2), TPB_OK);
    /* nothing a fleet does not use is taken without a word: a sweep's option, a second shape */
    assert_error(parse_resolve("--fleet --tp 2", 2), "--tp has no effect there");
    assert_error(parse_resolve("--iters 50 --fleet", 2), "--iters has no effect there");
    assert_error(parse_resolve("--fleet --gather parts", 2), "--gather has no effect there");
    assert_error(parse_resolve("--fleet --shape 8x8x8,16x16x16", 2), "2 shapes were given");
    ck_assert_int_eq(parse_resolve("--fleet --shape 8x8x8 --dtype fp32 --timeout 9", 2), TPB_OK);
    ck_assert_int_eq(parse_resolve("--fleet --budget 2m", 2), TPB_OK); /* more GEMM rounds */
    /* --trace-ranks where every mark reaches rank 0 anyway */
    assert_error(parse_resolve("--trace-ranks 1 --gather full", 2), "with --gather full");
    assert_error(parse_resolve("--trace-ranks all --timeline off", 2), "with --timeline off");
    assert_error(parse_resolve("--block --split col --shape 8x8x8,8x16x8 --trace-ranks 2", 2),
                 "with --block");
    ck_assert_int_eq(parse_resolve("--trace-ranks 1 --gather parts", 2), TPB_OK);
    assert_error(parse("--trace-ranks ALL"), "expected all or a number of ranks");
    assert_error(parse("--iters abc"), "--iters 'abc': expected an integer");
    assert_error(parse("--iters 0"), "--iters '0'");
    assert_error(parse("-m 0"), "-m '0'");
    assert_error(parse("-n -5"), "-n '-5'");
    assert_error(parse("--tp 2,x"), "--tp 'x'");
    assert_error(parse("--tp 2,,4"), "empty item");
    assert_error(parse("--tp ,2"), "empty item"); /* found by fuzz_shapes */
    assert_error(parse("--shape ,1x4x4,1x3x4"), "empty item");
    assert_error(parse("--tp 4294967296"), "expected an integer from 1 to 1048576");
    assert_error(parse("--emulate-speed 1,1.5"), "outside");
    assert_error(parse("--split rows"), "--split 'rows': expected row and/or col");
    assert_error(parse("--policy evne"),
                 "--policy 'evne': expected even, weighted, adaptive and/or cost");
    assert_error(parse("--dtype fp23"), "--dtype 'fp23': expected one of");
    assert_error(parse("--backend gpu"), "--backend 'gpu': expected auto, cuda or host");
    assert_error(parse("--emulate-speed 1,0"), "--emulate-speed '0': every value must be > 0");
    assert_error(parse("--emulate-speed 1,-2"), "every value must be > 0");
    assert_error(parse("--speeds 1,nan"), "--speeds 'nan': expected a number");
    assert_error(parse("--iters"), "--iters needs a value");
    assert_error(parse("--check=yes"), "--check takes no value");
    assert_error(parse("--inject-delay 1"), "RANK:MICROSECONDS");
    assert_error(parse("--inject-clock-offset 1:5:3"), "RANK:MICROSECONDS");
    assert_error(parse("--timeline maybe"), "on or off");
}
END_TEST

START_TEST(resolve_against_world)
{
    assert_error(parse_resolve("--tp 3", 4), "--tp 3 does not divide the 4 ranks");
    assert_error(parse_resolve("--tp 8", 4), "--tp 8 does not divide");
    ck_assert_int_eq(parse_resolve("--tp 1,3,4", 4), TPB_OK); /* a list keeps 3: skipped later */
    ck_assert_int_eq(o.ntp, 3);
    assert_error(parse_resolve("--emulate-speed 1,0.5,1", 2),
                 "--emulate-speed has 3 values but there are 2 ranks");
    assert_error(parse_resolve("--speeds 1", 2), "--speeds has 1 values");
    assert_error(parse_resolve("--dtype bf16", 2), "the host backend supports fp32 and fp64");
    assert_error(parse_resolve("--inject-delay 5:100", 2), "rank 5 does not exist");
    assert_error(parse_resolve("--speeds 1,1 --calibration-file /tmp/c", 2), "one source");
    /* an option the run would not read is refused, not ignored (issue 56) */
    assert_error(parse_resolve("--rebalance-every 3", 2), "measures no adaptive config");
    ck_assert_int_eq(parse_resolve("--rebalance-every 3 --policy even,adaptive", 2), TPB_OK);
    assert_error(parse_resolve("--emulate-mode work", 2), "none is slowed");
    ck_assert_int_eq(parse_resolve("--emulate-mode work --emulate-speed 1,0.5", 2), TPB_OK);
    assert_error(parse_resolve("--col-collective allreduce --split row", 2), "no col split");
    ck_assert_int_eq(parse_resolve("--col-collective allreduce --split row,col", 2), TPB_OK);
    assert_error(parse_resolve("--speeds 1,2 --policy even", 2), "measures only even");
    ck_assert_int_eq(parse_resolve("--speeds 1,2 --policy even,weighted", 2), TPB_OK);
}
END_TEST

/* A value a sweep list repeats is measured once, with a note (not measured twice). */
START_TEST(repeats_merged)
{
    ck_assert_int_eq(parse_resolve("--tp 2,1,2 --overlap chunked --chunks 2,4,2,4", 4), TPB_OK);
    ck_assert_int_eq(o.ntp, 2);
    ck_assert_int_eq(o.tp[0], 2);
    ck_assert_int_eq(o.tp[1], 1);
    ck_assert_int_eq(o.nchunks, 2);
    ck_assert_str_eq(o.notes, "--tp repeats 2: measured once; --chunks repeats 2 and more: "
                              "measured once");
    ck_assert_int_eq(parse_resolve("--shape 8x16x32,8x8x8,8x16x32", 2), TPB_OK);
    ck_assert_int_eq(o.nshapes, 2);
    ck_assert_str_eq(o.notes, "shape 8x16x32 comes twice: measured once");
    ck_assert_int_eq(parse_resolve("-m 8,8 -n 16", 2), TPB_OK);
    ck_assert_int_eq(o.nshapes, 1);
    ck_assert_int_eq(parse_resolve("--comm-only --comm-sizes 4096,4097,8192", 2), TPB_OK);
    ck_assert_int_eq(o.nshapes, 2); /* 4096 and 4097 bytes: both 1024 fp32 elements */
    ck_assert(strstr(o.notes, "--comm-sizes: a message of 1024 elements comes twice"));
    ck_assert_int_eq(parse_resolve("--tp 1,2 --shape 8x8x8", 2), TPB_OK);
    ck_assert_str_eq(o.notes, "");
    /* --comm ccl: the vendor's collective library; nccl, its older name, is the same */
    ck_assert_int_eq(parse("--comm ccl"), TPB_OK);
    ck_assert_int_eq(o.comm, TPB_COMM_CCL);
    ck_assert_int_eq(parse("--comm nccl"), TPB_OK);
    ck_assert_int_eq(o.comm, TPB_COMM_CCL);
    ck_assert_str_eq(tpb_comm_kind_name(o.comm), "ccl");
    ck_assert_int_eq(parse("--comm mpi"), TPB_OK);
    ck_assert_int_eq(o.comm, TPB_COMM_MPI);
    assert_error(parse("--comm rccl"), "ccl (or nccl) or mpi");
}
END_TEST

/* fp8's GEMMs need widths in multiples of 16: the granularity and every shape's N and K
 * (resolved against the CUDA class, built or not: its defaults, no device). */
START_TEST(fp8_widths)
{
    ck_assert_int_eq(parse("--dtype fp8 --granularity 8"), TPB_OK);
    assert_error(tpb_options_resolve(&o, 2, &tpb_backend_cuda),
                 "--granularity 8 with --dtype fp8: its GEMMs need widths in multiples of 16");
    ck_assert_int_eq(parse("--dtype fp8 --shape 64x136x128"), TPB_OK);
    assert_error(tpb_options_resolve(&o, 2, &tpb_backend_cuda),
                 "shape 64x136x128 with --dtype fp8: N and K must be multiples of 16");
    ck_assert_int_eq(parse("--dtype fp8 --shape 8x144x128 --granularity 16"), TPB_OK);
    ck_assert_int_eq(tpb_options_resolve(&o, 2, &tpb_backend_cuda), TPB_OK);
    ck_assert_int_eq(parse("--dtype bf16 --shape 8x136x100 --granularity 8"), TPB_OK);
    ck_assert_int_eq(tpb_options_resolve(&o, 2, &tpb_backend_cuda), TPB_OK);
}
END_TEST

/* "did you mean": the distance (swaps count 1, case ignored, capped) and the nearest option */
START_TEST(suggestions)
{
    ck_assert_uint_eq(tpb_suggest_distance("iters", "iters", 2), 0);
    ck_assert_uint_eq(tpb_suggest_distance("iter", "iters", 2), 1);
    ck_assert_uint_eq(tpb_suggest_distance("itres", "iters", 2), 1); /* a swap */
    ck_assert_uint_eq(tpb_suggest_distance("ITERS", "iters", 2), 0);
    ck_assert_uint_eq(tpb_suggest_distance("kitten", "sitting", 5), 3);
    ck_assert_uint_eq(tpb_suggest_distance("kitten", "sitting", 2), 3); /* cap + 1 */
    ck_assert_uint_eq(tpb_suggest_distance("", "abc", 5), 3);
    const char *c[] = {"tp", "iters", "warmup", "emulate-speed", "comm-sizes"};
    ck_assert_int_eq(tpb_suggest("iter", c, 5), 1);
    ck_assert_int_eq(tpb_suggest("emulate-sped", c, 5), 3);
    ck_assert_int_eq(tpb_suggest("comm-size", c, 5), 4);
    ck_assert_int_eq(tpb_suggest("tq", c, 5), 0);   /* a short name: 1 edit */
    ck_assert_int_eq(tpb_suggest("wrmp", c, 5), 2); /* 2 edits of a 6-letter name */
    ck_assert_int_eq(tpb_suggest("wrp", c, 5), -1); /* 3 */
    ck_assert_int_eq(tpb_suggest("frobnicate", c, 5), -1);
    ck_assert_int_eq(tpb_suggest("iters", c, 0), -1);
    assert_error(parse("--iter 5"),
                 "unknown option '--iter': did you mean --iters? (tpbal --help)");
    assert_error(parse("--emulate-sped 1,0.5"), "did you mean --emulate-speed?");
    assert_error(parse("--comm-size=4K"), "did you mean --comm-sizes?");
    assert_error(parse("--frobnicate"), "unknown option '--frobnicate': see tpbal --help");
}
END_TEST

START_TEST(presets)
{
    tpb_shape_t sh[8];
    int n;
    char text[] = "# comment\n\nqkv 4096 6144 4096 col  # trailing\no 4096 4096 4096 row\n"
                  "plain 1 2 3\n";
    ck_assert_int_eq(tpb_preset_parse(text, "t", sh, 8, &n), TPB_OK);
    ck_assert_int_eq(n, 3);
    ck_assert_str_eq(sh[0].name, "qkv");
    ck_assert_uint_eq(sh[0].splits, TPB_SPLIT_COL);
    ck_assert_uint_eq(sh[1].splits, TPB_SPLIT_ROW);
    ck_assert_uint_eq(sh[2].splits, 0);
    ck_assert_int_eq(sh[2].k, 3);
    assert_error(tpb_preset_parse("x 1 2\n", "f.shapes", sh, 8, &n), "f.shapes:1");
    assert_error(tpb_preset_parse("x 1 2 3 diag\n", "f", sh, 8, &n), "row|col");
    assert_error(tpb_preset_parse("# nothing\n", "f", sh, 8, &n), "no shapes");
    /* a named preset from the source tree (TPBAL_PRESET_DIR is set by make check) */
    ck_assert_int_eq(parse("--model llama3-8b --shape 8x8x8"), TPB_OK);
    assert_error(tpb_preset_load(&o), "--model and --shape both given"); /* the flag given */
    ck_assert_int_eq(parse("--preset llama3-8b"), TPB_OK);
    ck_assert_int_eq(tpb_preset_load(&o), TPB_OK);
    ck_assert_int_eq(o.nshapes, 4);
    ck_assert_int_eq(o.shapes[3].k, 14336);
    ck_assert_int_eq(parse("--preset no-such-model"), TPB_OK);
    assert_error(tpb_preset_load(&o), "--preset 'no-such-model': no such preset; the presets: ");
    ck_assert_ptr_null(strstr(tpb_err_msg(), "did you mean")); /* nothing near it */
    ck_assert_ptr_nonnull(strstr(tpb_err_msg(), "llama3-70b"));
    ck_assert_int_eq(parse("--preset llama3-8B"), TPB_OK); /* a name's case, a letter off */
    assert_error(tpb_preset_load(&o), "no such preset: did you mean llama3-8b? (");
    ck_assert_int_eq(parse("--preset lama3-70b"), TPB_OK);
    assert_error(tpb_preset_load(&o), "did you mean llama3-70b?");
    /* a preset folder too long for a path is refused, not cut (it loaded another preset) */
    char *saved = getenv("TPBAL_PRESET_DIR") ? strdup(getenv("TPBAL_PRESET_DIR")) : NULL;
    char dir[5000];
    memset(dir, 'd', sizeof(dir) - 1);
    dir[0] = '/';
    dir[sizeof(dir) - 1] = '\0';
    setenv("TPBAL_PRESET_DIR", dir, 1);
    ck_assert_int_eq(parse("--preset llama3-8b"), TPB_OK);
    assert_error(tpb_preset_load(&o), "shorten $TPBAL_PRESET_DIR or give the file");
    if (saved)
        setenv("TPBAL_PRESET_DIR", saved, 1);
    else
        unsetenv("TPBAL_PRESET_DIR");
    free(saved);
}
END_TEST

/* Values longer than the parser's buffers are refused whole, never cut and then parsed. */
START_TEST(long_values_refused)
{
    char line[600];
    int len = snprintf(line, sizeof(line), "--inject-delay 1:");
    memset(line + len, '9', 150);
    line[len + 150] = '\0';
    assert_error(parse(line), "--inject-delay: the value has 152 characters: at most 127");
    len = snprintf(line, sizeof(line), "--comm-only --comm-sizes 4K:");
    memset(line + len, '8', 100);
    line[len + 100] = '\0';
    assert_error(parse(line), "the value has 103 characters: at most 95");
}
END_TEST

/* values echoed in error lines: escaped, shortened with the hint kept (issue 57) */
START_TEST(values_printed_safely)
{
    char out[64];
    tpb_err_printable("2\033]0;pwned\007", out, sizeof(out));
    ck_assert_str_eq(out, "2\\e]0;pwned\\x07");
    tpb_err_printable("caf\xc3\xa9 \xff\xc2\x85 \x7f", out, sizeof(out));
    ck_assert_str_eq(out, "caf\xc3\xa9 \\xff\\u0085 \\x7f");
    tpb_err_printable("abcdef", out, 4); /* never past cap */
    ck_assert_str_eq(out, "abc");
    char big[300];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    const char *v = tpb_err_value(big);
    ck_assert_int_eq(strncmp(v, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...", 51), 0);
    ck_assert_str_eq(v + 48, "... (299 bytes)");
    ck_assert_str_eq(tpb_err_value("short"), "short");
    assert_error(parse("--tp 2\033x"), "--tp '2\\ex'");
    ck_assert(!strchr(tpb_err_msg(), '\033'));
    assert_error(parse("--timeout 1e-9"), "expected 0 (off) or seconds from 1 to 1e7");
    assert_error(parse("--timeout 2e7"), "expected 0 (off) or seconds from 1 to 1e7");
    ck_assert_int_eq(parse("--timeout 0"), TPB_OK);
    ck_assert_int_eq(parse("--timeout 1"), TPB_OK);
    assert_error(parse("--comm-only --comm-sizes 4K::16M"), "an empty field");
    assert_error(parse("--comm-only --comm-sizes 4K,,16M"), "empty item in the list");
}
END_TEST

START_TEST(comm_only_sizes)
{
    /* a range as nccl-tests' -b 8 -e 256M -f 2, suffixes in 1024s */
    ck_assert_int_eq(parse_resolve("--comm-only --comm-sizes 8:256M:2", 4), TPB_OK);
    ck_assert_int_eq(o.ncomm_sizes, 26);
    ck_assert_int_eq(o.comm_sizes[0], 8);
    ck_assert_int_eq(o.comm_sizes[25], 256L << 20);
    ck_assert_int_eq(o.nshapes, 26);
    ck_assert(o.shapes[25].comm_only && o.shapes[25].m == 1 && o.shapes[25].n == 64L << 20);
    ck_assert_str_eq(o.shapes[0].name, "comm-8");
    ck_assert_int_eq(o.granularity, 1);
    ck_assert_int_eq(o.ntp, 2); /* 2 and 4: tp 1 has no collective */
    ck_assert_int_eq(o.tp[0], 2);
    ck_assert_uint_eq(o.policies, TPB_POLICY_EVEN); /* weighted needs --speeds */
    /* a list; a range whose MAX is not on the grid stops below it; KiB/MB spellings */
    ck_assert_int_eq(parse_resolve("--comm-only --comm-sizes 64K,1MiB,16MB --dtype fp64", 2),
                     TPB_OK);
    ck_assert_int_eq(o.ncomm_sizes, 3);
    ck_assert_int_eq(o.comm_sizes[1], 1L << 20);
    ck_assert_int_eq(o.shapes[2].n, (16L << 20) / 8);
    ck_assert_int_eq(parse_resolve("--comm-only --comm-sizes 1K:10K:3", 2), TPB_OK);
    ck_assert_int_eq(o.ncomm_sizes, 3); /* 1K, 3K, 9K */
    ck_assert_int_eq(o.comm_sizes[2], 9216);
    /* defaults: 4K..16M by 4; weighted with --speeds */
    ck_assert_int_eq(parse_resolve("--comm-only --speeds 1,2", 2), TPB_OK);
    ck_assert_int_eq(o.ncomm_sizes, 7);
    ck_assert_uint_eq(o.policies, TPB_POLICY_EVEN | TPB_POLICY_WEIGHTED);
    assert_error(parse("--comm-only --comm-sizes 0"), "expected bytes from 1 to 16G");
    assert_error(parse("--comm-only --comm-sizes 17G"), "expected bytes from 1 to 16G");
    assert_error(parse("--comm-only --comm-sizes 4X"), "expected bytes");
    assert_error(parse("--comm-only --comm-sizes 8:4"), "MAX is below MIN");
    assert_error(parse("--comm-only --comm-sizes 8:16:1"), "expected an integer from 2");
    assert_error(parse_resolve("--comm-only --check", 2), "drop --check");
    assert_error(parse_resolve("--comm-only --policy weighted", 2), "needs --speeds");
    assert_error(parse_resolve("--comm-only", 1), "at least 2 ranks");
    assert_error(parse_resolve("--comm-sizes 4K", 2), "needs --comm-only");
    assert_error(parse_resolve("--comm-only --comm-sizes 2", 2), "smaller than one fp32");
}
END_TEST

START_TEST(cost_profile)
{
    ck_assert_int_eq(parse_resolve("--cost-profile skew:4", 2), TPB_OK);
    ck_assert_int_eq(o.cost_profile.nblocks, 2);
    ck_assert_uint_eq(o.policies, TPB_POLICY_EVEN | TPB_POLICY_WEIGHTED | TPB_POLICY_COST);
    ck_assert_int_eq(parse_resolve("--cost-profile skew:4 --policy even,cost", 2), TPB_OK);
    ck_assert_uint_eq(o.policies, TPB_POLICY_EVEN | TPB_POLICY_COST);
    assert_error(parse_resolve("--policy cost", 2), "--policy cost balances a --cost-profile");
    assert_error(parse_resolve("--cost-profile skew:0.5", 2), "skew:R with R in [1");
    assert_error(parse_resolve("--cost-profile /nonexistent/costs", 2), "no such file");
    assert_error(parse_resolve("--cost-profile /", 2), "--cost-profile");
    assert_error(parse_resolve("--cost-profile skew:4 --policy adaptive", 2), "use --policy cost");
    assert_error(
        parse_resolve("--cost-profile skew:4 --emulate-speed 1,0.5 --emulate-mode work", 2),
        "--emulate-mode time");
    assert_error(parse_resolve("--comm-only --cost-profile skew:4", 2), "drop --cost-profile");
}
END_TEST

START_TEST(gather_modes)
{
    ck_assert_int_eq(parse_resolve("", 4), TPB_OK);
    ck_assert_int_eq(o.gather, TPB_GATHER_AUTO);
    ck_assert_int_eq(o.trace_ranks, TPB_TRACE_RANKS_DEFAULT);
    ck_assert_int_eq(parse_resolve("--gather parts --trace-ranks all", 4), TPB_OK);
    ck_assert_int_eq(o.gather, TPB_GATHER_PARTS);
    ck_assert_int_eq(o.trace_ranks, -1);
    ck_assert_int_eq(parse_resolve("--gather full", 4), TPB_OK);
    ck_assert_int_eq(o.gather, TPB_GATHER_FULL);
    ck_assert_int_eq(parse_resolve("--trace-ranks 8", 4), TPB_OK); /* auto may take parts */
    ck_assert_int_eq(o.trace_ranks, 8);
    assert_error(parse("--gather some"), "--gather");
    assert_error(parse("--trace-ranks 0"), "--trace-ranks");
    /* what needs every mark on rank 0, in one line; auto takes them in full */
    assert_error(parse_resolve("--gather parts --timeline off", 4), "--timeline off");
    assert_error(parse_resolve("--gather parts --overlap chunked", 4), "--overlap chunked");
    ck_assert_int_eq(parse_resolve("--timeline off", 4), TPB_OK);
}
END_TEST

/* --budget: seconds, with or without a unit; anything else one line naming the flag. */
START_TEST(budget_seconds)
{
    ck_assert_int_eq(parse("--budget 90"), TPB_OK);
    ck_assert_double_eq(o.budget_s, 90.0);
    ck_assert_int_eq(parse("--budget 90s"), TPB_OK);
    ck_assert_double_eq(o.budget_s, 90.0);
    ck_assert_int_eq(parse("--budget 2m"), TPB_OK);
    ck_assert_double_eq(o.budget_s, 120.0);
    ck_assert_int_eq(parse("--budget 1.5h"), TPB_OK);
    ck_assert_double_eq(o.budget_s, 5400.0);
    ck_assert_int_eq(parse("--iters 7"), TPB_OK);
    ck_assert_double_eq(o.budget_s, 0.0); /* off by default */
    assert_error(parse("--budget 2x"), "--budget '2x': expected seconds");
    assert_error(parse("--budget -1"), "--budget '-1': expected seconds");
    assert_error(parse("--budget nan"), "--budget 'nan': expected seconds");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("options");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, defaults);
    tcase_add_test(tc, full_command_line);
    tcase_add_test(tc, shapes);
    tcase_add_test(tc, bad_input);
    tcase_add_test(tc, suggestions);
    tcase_add_test(tc, resolve_against_world);
    tcase_add_test(tc, fp8_widths);
    tcase_add_test(tc, repeats_merged);
    tcase_add_test(tc, long_values_refused);
    tcase_add_test(tc, presets);
    tcase_add_test(tc, comm_only_sizes);
    tcase_add_test(tc, values_printed_safely);
    tcase_add_test(tc, cost_profile);
    tcase_add_test(tc, gather_modes);
    tcase_add_test(tc, budget_seconds);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MAIN(suite)
