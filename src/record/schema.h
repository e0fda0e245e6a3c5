/*
 * schema.h - what tpbal's records mean to the tools that read them, printed by
 * `tpbal --print-schema` and kept as src/tools/tpbal_schema.json (the Python tools read it
 * instead of their own lists; tests/schema.sh holds the two equal): a config key's rows
 * (base/config_key.h), and what identifies a config across runs.
 */
#ifndef TPB_SCHEMA_H
#define TPB_SCHEMA_H

#include <stdio.h>

#include "base/buf.h"

/** The schema as one JSON object into js. */
void tpb_schema_json(tpb_buf_t *js);

/** The same, a line to f (tpbal --print-schema). */
void tpb_schema_print(FILE *f);

#endif /* TPB_SCHEMA_H */
