/* options_help.c - tpbal --help, from the option table (cli/options_table.h). */
#include <stdio.h>
#include <string.h>

#include "backend/backend.h"
#include "cli/options.h"
#include "tpb_config.h"
#include "cli/options_table.h"

/* The left column of an entry in --help. */
static void usage_label(const tpb_opt_spec_t *o, char *out, size_t cap)
{
    if (o->label) {
        snprintf(out, cap, "%s", o->label);
        return;
    }
    char shortf[8] = "    ";
    if (o->short_name)
        snprintf(shortf, sizeof(shortf), "-%c, ", o->short_name);
    snprintf(out, cap, "  %s--%s%s%s", shortf, o->name, o->arg ? " " : "", o->arg ? o->arg : "");
}

/* The help of the entries whose text depends on the backends built (help ""): every
 * class of the registry speaks for itself. */
static void registry_help(int id, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    if (id == OPT_BACKEND)
        len += (size_t)snprintf(out, cap,
                                "auto: the first of the list below with a device "
                                "here");
    for (int i = 0; tpb_backends[i] && len < cap; i++) {
        const tpb_backend_class_t *b = tpb_backends[i];
        if (id == OPT_BACKEND)
            len += (size_t)snprintf(out + len, cap - len, "\n%s: %s", b->name, b->about);
        else if (id == OPT_DTYPE)
            len += (size_t)snprintf(out + len, cap - len, "%s%s (%s)", i ? "\n" : "", b->dtypes,
                                    b->name);
        else
            len += (size_t)snprintf(out + len, cap - len, "%s %ld %s", i ? "," : "",
                                    b->defaults.granularity, b->name);
    }
    if (id == OPT_GRAN) {
        char list[160];
        snprintf(list, sizeof(list), "%s", out);
        snprintf(out, cap, "shard size unit (default%s)", list);
    }
}

void tpb_options_usage(FILE *f)
{
    fputs("Usage: mpirun -np P tpbal [options]      (or srun -n P tpbal, or a singleton)\n"
          "\n"
          "Tensor-parallel GEMM + collective sweeps: Y[MxN] = X[MxK] W[KxN] split over the\n"
          "t ranks of each TP group (groups of consecutive ranks, all running at once),\n"
          "with an even split against a split weighted by each rank's measured speed.\n",
          f);
    for (size_t i = 0; i < tpb_opt_nflags; i++) {
        const tpb_opt_spec_t *o = &tpb_opt_table[i];
        if (o->section)
            fprintf(f, "\n%s%s", o->section, o->section[0] ? "\n" : "");
        if (!o->help)
            continue;
        char label[64], generated[512];
        const char *help = o->help;
        if (!help[0]) {
            registry_help(o->id, generated, sizeof(generated));
            help = generated;
        }
        usage_label(o, label, sizeof(label));
        if (strlen(label) < 28) /* two columns; a long label has its text below */
            fprintf(f, "%-28s ", label);
        else
            fprintf(f, "%s\n%29s", label, "");
        for (const char *h = help; *h; h++) {
            fputc(*h, f);
            if (*h == '\n')
                fprintf(f, "%29s", "");
        }
        fputc('\n', f);
    }
    fputs("\nExit codes: 0 success, 2 bad input or environment (one line on rank 0 says what\n"
          "to change), 3 --check failed, 4 a collective timed out (--timeout), 128+N stopped\n"
          "by signal N (results kept), 1 other failures. Metrics: see doc/METRICS.md.\n"
          "Then: tpbal-report DIR (plots and index.html), tpbal-compare A B (regressions,\n"
          "exit 1 when B is worse), tpbal-plan DIR (predictions checked by leave-one-out,\n"
          "a layout for a world size, --plan-out shard plans), installed beside tpbal.\n"
          "Words (window, set, round, look, pass, LB, E, %last, verdicts, sure): one\n"
          "meaning each, in doc/GLOSSARY.md (installed with the docs, and at the end of\n"
          "every report).\n",
          f);
}

void tpb_options_version(FILE *out)
{
    fprintf(out, "tpbal %s\n", PACKAGE_VERSION);
    for (int i = 0; tpb_backends[i]; i++) {
        const tpb_backend_class_t *b = tpb_backends[i];
        if (b->built)
            fprintf(out, "backend %s: built, %d device(s) visible\n", b->name, b->device_count());
        else
            fprintf(out, "backend %s: not built\n", b->name);
    }
}
