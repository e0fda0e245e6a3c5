/* fuzz_options.c - libFuzzer target: the command line (argv split on NUL bytes)
 * through tpb_options_parse and tpb_options_resolve for 1..8 ranks. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "cli/options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || size > 4096)
        return 0;
    char *text = malloc(size + 1);
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    char *argv[65] = {"tpbal"};
    int argc = 1;
    for (char *p = text; p < text + size - 1 && argc < 64; p += strlen(p) + 1)
        argv[argc++] = p;
    tpb_options_t o;
    tpb_options_init(&o);
    if (tpb_options_parse(&o, argc, argv) == TPB_OK)
        tpb_options_resolve(&o, 1 + data[0] % 8, &tpb_backend_host);
    tpb_options_free(&o);
    free(text);
    return 0;
}
