/* fuzz_preset.c - libFuzzer target: the text of a preset file. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/preset.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536)
        return 0;
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    static tpb_shape_t shapes[TPB_MAX_SHAPES];
    int n = 0;
    if (tpb_preset_parse(text, "fuzz.shapes", shapes, TPB_MAX_SHAPES, &n) == TPB_OK)
        for (int i = 0; i < n; i++)
            if (shapes[i].m < 1 || shapes[i].n > TPB_MAX_DIM)
                abort(); /* a shape out of range was accepted */
    free(text);
    return 0;
}
