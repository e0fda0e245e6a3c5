/* fuzz_calfile.c - libFuzzer target: the text of a calibration file; what is
 * accepted must survive a write and a re-read unchanged in size. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/calfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536)
        return 0;
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    tpb_calfile_t t = {0};
    if (tpb_calfile_parse(text, "fuzz.csv", &t) == TPB_OK) {
        for (int i = 0; i < t.n; i++)
            if (!(t.e[i].gflops > 0.0) || !isfinite(t.e[i].gflops))
                abort(); /* a speed that cannot be written back was accepted */
        char path[64];
        snprintf(path, sizeof(path), "/tmp/tpbal-fuzz-%ld.csv", (long)getpid());
        tpb_calfile_t u = {0};
        if (tpb_calfile_save(path, &t) != TPB_OK || tpb_calfile_load(path, &u) != TPB_OK ||
            u.n != t.n)
            abort(); /* tpbal could not read back what it wrote */
        tpb_calfile_free(&u);
        unlink(path);
    }
    tpb_calfile_free(&t);
    free(text);
    return 0;
}
