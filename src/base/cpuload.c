/* cpuload.c - other processes' share of a machine's CPUs during a run (cpuload.h). */
#include "base/cpuload.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

int tpb_cpuload_parse(const char *text, long hz, double *busy_s, int *ncpu)
{
    unsigned long long v[10] = {0};
    const char *at = text ? strstr(text, "cpu ") : NULL;
    if (!at || hz <= 0 || (at != text && at[-1] != '\n'))
        return -1;
    if (sscanf(at + 4, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
               &v[5], &v[6], &v[7]) < 4)
        return -1;
    /* user nice system idle iowait irq softirq steal: busy is all but idle and iowait */
    *busy_s = (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / (double)hz;
    int n = 0;
    for (const char *p = text; (p = strstr(p, "\ncpu")) != NULL; p += 4)
        n += p[4] >= '0' && p[4] <= '9';
    *ncpu = n > 0 ? n : 1;
    return 0;
}

double tpb_cpuload_others(double busy0, double busy1, double own_s, double wall_s, int ncpu)
{
    if (!(wall_s > 0.0) || ncpu < 1 || !(busy1 >= busy0) || !isfinite(own_s))
        return NAN;
    double share = (busy1 - busy0 - own_s) / (wall_s * ncpu);
    return fmin(1.0, fmax(0.0, share));
}

int tpb_cpuload_read(double *busy_s, int *ncpu, uint64_t *machine)
{
    char text[1 << 16];
    *machine = 0;
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        int c;
        while ((c = fgetc(f)) != EOF && c != '\n') /* FNV-1a of the id's text */
            *machine = (*machine ^ (uint64_t)(unsigned char)c) * 1099511628211ull;
        fclose(f);
    }
    f = fopen("/proc/stat", "r");
    if (!f)
        return -1;
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    if (tpb_cpuload_parse(text, sysconf(_SC_CLK_TCK), busy_s, ncpu) != 0)
        return -1;
    long online = sysconf(_SC_NPROCESSORS_ONLN); /* a long /proc/stat may be cut above */
    *ncpu = online > *ncpu ? (int)online : *ncpu;
    return 0;
}

double tpb_cpuload_self(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return NAN;
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec * 1e-6;
}
