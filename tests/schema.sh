# schema.sh - src/tools/tpbal_schema.json, which the Python tools read for a config's identity
# (tpbal_results.KEY_FIELDS and its defaults), is what `tpbal --print-schema` prints from
# base/config_key.h's rows and record/schema.c (issue 58): a row added in C without the file
# regenerated fails here, with the command that regenerates it.
set -u
top=${TPBAL_SRCDIR:?}
build=${TPBAL_BUILDDIR:?}
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
out=$("$build/src/tpbal" --print-schema) || { echo "FAIL: tpbal --print-schema failed"; exit 1; }
printf '%s\n' "$out" | python3 -c '
import json, sys
printed = json.load(sys.stdin)
kept = json.load(open(sys.argv[1]))
if printed != kept:
    sys.exit("FAIL: src/tools/tpbal_schema.json is not what tpbal --print-schema prints; "
             "regenerate: build/src/tpbal --print-schema | python3 -m json.tool --indent 1 "
             "> src/tools/tpbal_schema.json")
rows = printed["config_key"]
assert [r["json"] for r in rows][:4] == ["shape", "m", "n", "k"], rows
assert all(k in printed["identity"] for k in ("tp", "split", "policy", "sequence_parallel"))
assert "shape" not in printed["identity"]  # a layer renamed still compares
print("schema: %d key fields, %d identity fields" % (len(rows), len(printed["identity"])))
' "$top/src/tools/tpbal_schema.json"
