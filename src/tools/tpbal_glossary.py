"""tpbal_glossary: the words tpbal's output uses, one meaning each. doc/GLOSSARY.md is
markdown() of TERMS (tests/python/test_text.py holds them equal; regenerate it with
`python3 src/tools/tpbal_glossary.py > doc/GLOSSARY.md`), and tpbal-report's page ends
with them, so that --help, the docs and the report define every term the same way."""
import html

TERMS = [
    ("answer", "the lines after the table (and the summary in results.jsonl): per shape and "
               "TP degree the fastest config, each policy's verdict over even, the stragglers, "
               "and the use lines, what to run for latency and for throughput."),
    ("block", "a transformer block: with --block (or --model) the shapes' GEMMs run back to "
              "back as one step per TP degree and policy, ranked by tokens per second per "
              "rank. A block's GEMMs, each timed alone, are its parts."),
    ("window", "a stretch of one config's iterations (an interleaved round, else a fifth of "
               "them) in which each TP group's slowest rank is counted once: the persistent-"
               "straggler test counts windows (results.jsonl keeps the keys blocks, "
               "slowest_blocks, blocks_needed, effective_blocks)."),
    ("set", "the configs measured side by side (--interleave on): the policies of one shape, "
            "TP degree, split and placement, their iterations in alternating rounds."),
    ("round", "one turn of a set: each of its configs runs a few iterations in turn (ABBA), "
              "so that a change of the machine's speed falls on all; a speed-up's interval "
              "pairs the rounds."),
    ("unit", "what a set measures together: one config, or one policy's GEMMs of a block."),
    ("look", "with --budget, one more measurement of a set whose verdict is still open "
             "(--iters more of each config, side by side); a verdict after look j is held at a "
             "stricter level (97.5 % after one, 99.2 % after two, ...) so that 95 % holds over "
             "all looks; at most 8."),
    ("pass", "one whole sweep of a --repeat N launch (DIR/pass-K), with its own calibration, "
             "clock sync and --budget; the answer over the passes ends the run."),
    ("LB", "load balance: the fastest rank's compute time over the slowest's (1: balanced)."),
    ("E", "parallel efficiency, T_1 / (t x T_step): the fastest rank's time for the whole "
          "layer (the TP 1 config of the shape) over t times the step. Above 1 when t ranks "
          "together run faster than t times one: a shard that fits in a cache the whole GEMM "
          "did not, or a slow TP 1 run."),
    ("%last", "the share of iterations in which a rank arrived last at the collective; in "
              "parentheses, (1:65%), it is by chance: no straggler beyond noise."),
    ("straggler", "a rank that arrived last in more than (1 + 1/t)/2 of the iterations, by at "
                  "least 5 % of the step. Persistent: the slowest of its group in enough "
                  "windows that chance alone would name one at most once in 100 runs (slower "
                  "over the whole run); transient: the windows could have named it and did "
                  "not (a passing slowdown); not enough data: too few windows to tell."),
    ("verdict", "a policy over even, from its speed-up's 95 % interval and a 5 % tolerance: "
                "better or worse (the whole interval beyond 5 %), a draw (the whole interval "
                "within 5 %), inconclusive (neither: measure longer), disturbed (more than "
                "balancing could buy: the two were not measured alike)."),
    ("at most", "the bound: the speed-up a perfect balance of the ranks' measured speeds "
                "would give over even; a measured speed-up above it is disturbed."),
    ("sure", "a pick against the next best config: sure when the whole interval of their "
             "ratio favours the pick (a block's: beyond 5 %), not sure when it reaches 1 "
             "(either will do), not enough data without an interval."),
    ("calibration", "all ranks at once time GEMMs at their even shard until the speeds settle "
                    "(spread: the relative IQR of a rank's samples, goal 5 %); the weighted "
                    "split divides the work by these speeds."),
    ("Q on df", "Cochran's Q of the passes' estimates around their inverse-variance mean, on "
                "n - 1 degrees of freedom: at most n - 1, the passes agree within their "
                "intervals and are pooled; above, a pass is the unit."),
    ("xfer", "the collective's own time: from the last rank's arrival to its end (the wait "
             "before it is another rank's lateness, not the link's)."),
    ("busbw", "bus bandwidth as nccl-tests defines it: the bytes a collective moves scaled by "
              "its algorithm's factor, comparable across group sizes."),
    ("placement", "packed: a TP group's ranks consecutive (on one node where they fit); "
                  "spread: one rank per node in turn, across the nodes."),
    ("noise", "other processes' share of the CPU beside the run (the # noise: line, above "
              "25 %): every verdict is read with care, and tpbal-compare says can't tell."),
]


def block_sure(verdict):
    """A block's pick against its runner-up in words ("sure" above), from the run's verdict
    on them (the block ranking's rule, src/record/answer_block.c): better beyond 5 %."""
    return {"better": "sure", "draw": "a draw within 5 %, either will do"}.get(verdict,
                                                                              "not sure")


def markdown():
    """doc/GLOSSARY.md's text."""
    out = ["# tpbal's words", "",
           "Each word tpbal prints has one meaning, below. `tpbal --help` and the report",
           "(`tpbal-report`, at the end of index.html) point here; doc/METRICS.md has the",
           "rules in full. Generated from `src/tools/tpbal_glossary.py`.", ""]
    for term, text in TERMS:
        out.append("- **%s**: %s" % (term, text))
    return "\n".join(out) + "\n"


def html_part():
    """The report's closing section: the same words."""
    items = "".join("<li><b>%s</b>: %s</li>" % (html.escape(t), html.escape(d))
                    for t, d in TERMS)
    return ["<h2 id='words'>Words</h2><ul class='words'>%s</ul>" % items]


if __name__ == "__main__":
    print(markdown(), end="")
