"""tpbal_schema: a config's identity as tpbal defines it.

tpbal prints it (`tpbal --print-schema`, from the rows of src/base/config_key.h and
src/record/schema.c) and it is kept beside the tools as tpbal_schema.json (tests/schema.sh
holds the two equal). The tools build their keys here: a new dimension of the config key
(a row in C) reaches them without a tuple edited in each.
"""
import json
import os

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "tpbal_schema.json")) as _f:
    DOC = json.load(_f)

VERSION = DOC["schema"]  # the C record's TPB_SCHEMA_VERSION
ROWS = DOC["config_key"]  # the key's fields: json name, kind, groups, default, option
# what identifies a config across runs (the record's fields, in the tools' order), and what a
# record written before a field existed stands for
IDENTITY = DOC["identity"]
IDENTITY_DEFAULTS = DOC["identity_defaults"]
_DEFAULT = {r["json"]: r.get("default") for r in ROWS}


def fields(group):
    """The JSON names of the key's fields in a group ("layer", "variant", "choice",
    "block"), in the rows' order."""
    return tuple(r["json"] for r in ROWS if group in r["groups"])


# how a shape is run beyond its split (sequence parallelism): each field's value with its
# split's, in every key a tool builds
VARIANT = fields("variant")


def variant(rec):
    """The variant fields' values of a record (or answer entry), older records' defaults
    where missing: a tuple to splice into a key."""
    return tuple(rec.get(f) or _DEFAULT[f] for f in VARIANT)


def variant_dict(rec):
    """The same as a dict, to build a record-like entry."""
    return dict(zip(VARIANT, variant(rec)))


def variant_off():
    """The variant of a plain config (every field at its default: no sequence parallelism)."""
    return {f: _DEFAULT[f] for f in VARIANT}


def split_label(rec):
    """"row+sp": the split, with sequence parallelism, and "+field=value" for another variant
    field not at its default (as tpbal's tpb_config_key_split prints it)."""
    out = str(rec.get("split")) + ("+sp" if rec.get("sequence_parallel") == "on" else "")
    for f in VARIANT:
        if f != "sequence_parallel" and (rec.get(f) or _DEFAULT[f]) != _DEFAULT[f]:
            out += "+%s=%s" % (f, rec[f])
    return out
