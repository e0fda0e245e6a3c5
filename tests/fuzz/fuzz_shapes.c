/* fuzz_shapes.c - libFuzzer target: a --shape list. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/optparse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    static tpb_shape_t shapes[TPB_MAX_SHAPES];
    int n = 0;
    if (tpb_opt_shapes("--shape", text, shapes, &n) == TPB_OK)
        for (int i = 0; i < n; i++)
            if (shapes[i].m < 1 || shapes[i].m > TPB_MAX_DIM || shapes[i].k > TPB_MAX_DIM)
                abort(); /* a shape out of range was accepted */
    free(text);
    return 0;
}
