/*
 * preset.h - named shape files (bench/presets/NAME.shapes).
 *
 * Format: one shape a line, "name M N K [row|col]" ('#' starts a comment).
 * The optional split is the layer's natural Megatron split (column-parallel
 * QKV and MLP-up, row-parallel out and MLP-down); it applies unless --split
 * is given on the command line.
 */
#ifndef TPB_PRESET_H
#define TPB_PRESET_H

#include "cli/options.h"

/**
 * Find a preset: a name containing '/' is a path; otherwise NAME.shapes in
 * $TPBAL_PRESET_DIR, the source tree's bench/presets, then the installed
 * pkgdatadir. path receives the file found. TPB_ERR_INVALID if none exists.
 */
tpb_status_t tpb_preset_find(const char *name, char *path, size_t cap);

/** Parse preset text into shapes[max]; *n receives the count. */
tpb_status_t tpb_preset_parse(const char *text, const char *origin, tpb_shape_t *shapes, int max,
                              int *n);

/** Find, read and parse o->preset into o->shapes (no-op when o->preset is empty). */
tpb_status_t tpb_preset_load(tpb_options_t *o);

#endif /* TPB_PRESET_H */
