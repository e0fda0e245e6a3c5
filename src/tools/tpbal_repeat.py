"""tpbal_repeat: a --repeat run's folder as the tools read it: its repeat.json checked (the
passes it names), and its answer over the passes in the shape of one run's summary, so that
tpbal-report and tpbal-plan read a --repeat folder as they read one run."""
import os

import tpbal_results as tr
import tpbal_schema as ts
from tpbal_results import BadInput, clean


def repeat_doc(path):
    """A --repeat run's repeat.json, checked: (the document, its pass folders in order).
    Refused in one line where it is not JSON, is a --fleet run's, names no pass (a run
    stopped before its first) or names a pass twice."""
    doc = tr.load_json(os.path.join(path, "repeat.json"), "repeat.json", tr.MAX_JSONL,
                       "%s/repeat.json is not JSON: is it a tpbal --repeat run?" % clean(path))
    if isinstance(doc, dict) and doc.get("kind") == "fleet":
        raise BadInput("%s is a --fleet --repeat run: compare its passes' fleet.json with "
                       "--fleet (%s/pass-1 ...)" % (clean(path), clean(path)))
    dirs = doc.get("pass_dirs") if isinstance(doc, dict) else None
    status = doc.get("status") if isinstance(doc, dict) else None
    if dirs == [] and status in ("running", "interrupted", "timeout", "failed"):
        raise BadInput("%s: the --repeat run's repeat.json says %s before its first pass "
                       "was done: no pass to read" % (clean(path), clean(str(status))))
    if not isinstance(dirs, list) or not all(isinstance(d, str) and d.startswith("pass-")
                                             and "/" not in d for d in dirs) or not dirs:
        raise BadInput("%s: repeat.json names no passes: is it a tpbal --repeat run?"
                       % clean(path))
    twice = sorted({d for d in dirs if dirs.count(d) > 1})
    if twice:
        raise BadInput("%s: repeat.json names %s more than once: a pass is pooled once"
                       % (clean(path), clean(twice[0])))
    return doc, dirs


def repeat_summary(doc):
    """A --repeat run's answer over its passes (repeat.json) in a summary's shape, for the
    tools that read one run's: its use lines as they are, its verdicts over even as "tp"
    answers (a policy's speed-up, interval and verdict at the passes' level)."""
    answer, tps = [], {}
    for u in tr.records(doc.get("use")):
        answer.append(u)
    for v in tr.records(doc.get("verdicts")):
        if v.get("kind") != "config":
            continue
        at = (v.get("m"), v.get("n"), v.get("k"), v.get("tp"), v.get("placement"))
        if at not in tps:
            tps[at] = {"kind": "tp", "m": at[0], "n": at[1], "k": at[2], "tp": at[3],
                       "placement": at[4], "policies": []}
            answer.append(tps[at])
        tps[at]["policies"].append({"split": v.get("split"), "policy": v.get("policy"),
                                    **ts.variant_dict(v),
                                    "speedup": v.get("speedup"), "speedup_lo": v.get("lo"),
                                    "speedup_hi": v.get("hi"), "verdict": v.get("verdict")})
    return {"type": "summary", "answer": answer, "passes": doc.get("passes_done")}
