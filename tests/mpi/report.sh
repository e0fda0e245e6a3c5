# report.sh - tpbal-report on real results: a GEMM sweep with a late rank (step, E,
# even vs weighted, T(N), Gantt, arrival offsets) and a comm-only sweep (the alpha-beta
# plot). The plotted numbers are checked against the result files, every image the page
# names is a PNG that decodes, and index.html is rendered by headless Chromium: a
# screenshot that is not blank.
. "$(dirname "$0")/lib.sh"
REP=${TPBAL_REPORT:?}
MPL=${TPB_PYTHON_MPL:?}
"$MPL" -c "import matplotlib" 2>/dev/null || {
    echo "SKIP: no python3 with matplotlib (scripts/deps installs python3-matplotlib)"
    exit 77
}

tpbal 4 --tp 1,2,4 --shape 64x256x256 --speeds 1,1,1,2 --inject-delay 3:3000:4 --iters 16 \
    --out "$WORK/g"
expect_rc 0
tpbal 2 --comm-only --comm-sizes 4K:1M:4 --iters 10 --out "$WORK/c"
expect_rc 0
grep -q "^# avg bus bandwidth all-reduce tp 2: [0-9.]* GB/s (the mean of the busbw column over 5 sizes" \
    "$WORK/out" || fail "no average bus bandwidth line"
for d in g c; do
    echo "+ tpbal-report $WORK/$d"
    "$REP" "$WORK/$d" >"$WORK/rep.out" 2>&1 || { cat "$WORK/rep.out"; fail "tpbal-report $d"; }
    cat "$WORK/rep.out"
    "$PY" "$HERE/check_report.py" "$WORK/$d" "$WORK/$d/report" || fail "plotted numbers ($d)"
done
# the A-vs-B page: the same sweep again as B, tpbal-compare's decision drawn; its status is
# the one tpbal-compare exits with
tpbal 4 --tp 1,2,4 --shape 64x256x256 --speeds 1,1,1,2 --inject-delay 3:3000:4 --iters 16 \
    --out "$WORK/g2"
expect_rc 0
"$REP" "$WORK/g" --compare "$WORK/g2" >"$WORK/rep.out" 2>&1 || { cat "$WORK/rep.out"; fail "tpbal-report --compare"; }
cat "$WORK/rep.out"
[ -s "$WORK/g/report/compare.html" ] && [ -s "$WORK/g/report/cmp_deltas.png" ] || fail "no compare page"
"${TPBAL_COMPARE:?}" --wide "$WORK/g" "$WORK/g2" >"$WORK/cmp.txt" 2>&1
cmp_rc=$?
# every warning the command line prints is on the page: its noise, what single runs cannot
# see, the configs it cannot tell and why (whichever of these this run's noise raises)
"$PY" - "$WORK/cmp.txt" "$WORK/g/report/compare.html" <<'PY' || fail "a warning missing from compare.html"
import html, re, sys
txt, page = open(sys.argv[1]).read(), html.unescape(open(sys.argv[2]).read())
want = [l[2:] for l in txt.splitlines() if l.startswith("# can't tell (")]
verdict = [l for l in txt.splitlines() if l.startswith("tpbal-compare: ")][-1]
want += [m.group(1) for m in re.finditer(r"; ((?:noise|single runs on both sides): [^;]*)", verdict)]
missing = [w for w in want if w.rstrip() not in page]
print("compare page: %d warnings of the command line, %d missing" % (len(want), len(missing)))
assert not missing, missing
PY
"$PY" - "$WORK/g/report/compare.json" "$cmp_rc" <<'PY' || fail "the compare page's verdict"
import json, sys
d = json.load(open(sys.argv[1]))
print("compare page: status %s (%s), tpbal-compare exited %s" % (d["status"], d["verdict"], sys.argv[2]))
assert d["status"] == int(sys.argv[2]), d["status"]
assert len(d["deltas"]["labels"]) == 10, d["deltas"]["labels"]
PY
grep -q "class='headline'" "$WORK/g/report/index.html" || fail "no headline box"
for p in step weighted decomposition gantt arrivals ranks steps gantt_pair; do
    [ -s "$WORK/g/report/$p.png" ] && [ -s "$WORK/g/report/$p.svg" ] || fail "no $p plot"
done
[ -s "$WORK/c/report/comm.png" ] || fail "no comm plot"
# the layout as matplotlib laid it out: no legend over any plot's data (lines, bars, error
# bars, markers: tpbal_plots.legend_over_data, which test_plots shows can fail); the
# even-vs-weighted bars carry their intervals; the Gantt says where other configs ran
"$PY" - "$WORK/g/report/plots.json" "$WORK/c/report/plots.json" <<'PY' || fail "the plots' layout"
import json, sys
for p in sys.argv[1:]:
    d = json.load(open(p))
    over = {k: v["legend_over_data"] for k, v in d["layout"].items() if v["legend_over_data"]}
    print("%s: %d plots laid out, legends over data: %s" % (p, len(d["layout"]), over or "none"))
    assert d["layout"] and not over, over
g = json.load(open(sys.argv[1]))
ivs = [i for i in g["weighted"]["interval"] if i]
assert ivs and all(lo <= hi for lo, hi in ivs), g["weighted"]["interval"]
assert isinstance(g["timeline"]["interleaved_us"], list)
PY
# plots that render: no TeX markup in any SVG (a log axis printed $\mathdefault{10^{4}}$)
for f in "$WORK"/g/report/*.svg "$WORK"/c/report/*.svg; do
    ! grep -q 'mathdefault\|\$\\' "$f" || fail "TeX markup in $(basename "$f")"
done
# the page: the answer first, the configs table second; a comm-only run has its answer box
# (the fit with intervals and quality, nccl-tests' average bus bandwidth)
"$PY" - "$WORK/g/report/index.html" "$WORK/c/report/index.html" <<'PY' || fail "page order or comm answer"
import sys
g, c = (open(p).read() for p in sys.argv[1:3])
assert g.index("class='headline'") < g.index("<h2>Configs</h2>") < g.index("<h2>Run</h2>") \
    < g.index("<h2>Plots</h2>"), "order"
assert "<th>late by</th>" in g, "no lateness column"
assert "class='headline'" in c and "average bus bandwidth" in c and " fit)" in c, "comm answer"
assert "B 95 %" in c and "avg busbw (GB/s)" in c, "comm fit table"
PY
# the straggler's iterations (every 4th, rank 3): the default Gantt config is one with tp > 1
grep -q '"slowest_iter"' "$WORK/g/report/plots.json" || fail "no timeline data"

# bad input: one line, exit 2, nothing written
"$REP" "$WORK/none" >"$WORK/out" 2>"$WORK/err"
[ $? -eq 2 ] && grep -q "^tpbal-report: error: cannot read" "$WORK/err" || fail "missing dir"
"$REP" --config 99 "$WORK/g" >"$WORK/out" 2>"$WORK/err"
[ $? -eq 2 ] && grep -q "no such config" "$WORK/err" || fail "--config 99"
"$REP" --help >"$WORK/help" && grep -q "index.html" "$WORK/help" || fail "--help"

# a real browser: render, screenshot, every image loaded
CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$CHROME" ]; then
    echo "SKIP: no Chromium for the browser check (scripts/deps installs chromium)"
    exit 77
fi
for d in g c cmp; do
    page="file://$WORK/$d/report/index.html"
    [ "$d" = cmp ] && page="file://$WORK/g/report/compare.html"
    timeout 120 "$CHROME" --headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage \
        --user-data-dir="$WORK/chrome-$d" --hide-scrollbars --window-size=1300,2400 \
        --screenshot="$WORK/$d.png" "$page" >"$WORK/chrome.out" 2>&1 ||
        { tail -5 "$WORK/chrome.out"; fail "chromium screenshot ($d)"; }
    html="$WORK/$d/report/index.html"
    [ "$d" = cmp ] && html="$WORK/g/report/compare.html"
    "$MPL" - "$html" <<'PY' || fail "an image of the page ($d)"
import os, re, sys
import matplotlib.image as mpimg
page = sys.argv[1]
srcs = re.findall(r"<img src='([^']+)'", open(page).read())
assert srcs, "no image in the page"
for s in srcs:  # every image the page names is a file that decodes
    img = mpimg.imread(os.path.join(os.path.dirname(page), s))
    assert img.shape[0] > 50 and img.shape[1] > 50, (s, img.shape)
print("%d images, all decode" % len(srcs))
PY
    "$MPL" - "$WORK/$d.png" <<'PY' || fail "blank screenshot ($d)"
import sys
import matplotlib.image as mpimg
img = mpimg.imread(sys.argv[1])
h, w = img.shape[:2]
dark = (img[..., :3].mean(axis=2) < 0.5).mean()
print("screenshot %dx%d, %.1f %% dark pixels" % (w, h, 100 * dark))
assert w >= 1000 and h >= 1000 and dark > 0.01, "the page rendered blank"
PY
done
echo "report: ok"
