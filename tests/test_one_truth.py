"""One figure per question on every page: each committed run rendered as markdown, HTML, JSON, text
diff and findings, then the rendered text parsed back. For every compared pair the ratio must read
the same wherever it is shown, sit inside its own interval and equal the ratio of the medians shown
beside it; every breakdown of a difference must add up to the difference it explains; every total
must be the sum of the parts shown with it. The checks read the rendered strings, not the
objects that produced them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import traceinsight
from traceinsight.findings import compared_pairs
from traceinsight.report import render, render_diff
from traceinsight.report.diff import diff_data
from traceinsight.testing import sample_run

DATA = Path(__file__).parent / "data"
RUN_DIRS = sorted(p for d in ("runs", "attribution") for p in (DATA / d).iterdir()
                  if (p / "run.json").is_file())

NUM = r"(?:<0\.001|-?\d+(?:\.\d+)?)"
# a ratio, its interval when it has one, then why it has none or does not count, when it says
RATIO = re.compile(rf"({NUM})×(?: \[({NUM}), ({NUM})\])?(?: \((.*)\))?")
# "<a> <a_ms> vs <b> <b_ms> ms/step (<ratio>× [lo, hi]..." as the findings write a pair
VS = re.compile(rf"(\S+) ({NUM}) vs (\S+) ({NUM}) ms/step \(({NUM})× (?:\[({NUM}), ({NUM})\])?")
# "the untraced step differs by +8.60 ms, by category with the profiler's cost taken out:
# python +5.22, op +1.54 ..." (a foreign trace's: "the traced steps' mean differs by ...")
BREAKDOWN = re.compile(rf"(?:the traced steps' mean|the untraced step) differs by ({NUM}|\+{NUM}) ms"
                       rf"(?:, by category with the profiler's cost taken out)?: "
                       rf"((?:[a-z]+ [+-]?{NUM}(?:, )?)+)")


def num(s: str) -> float:
    return 0.0 if s == "<0.001" else float(s)


def rounding(shown: str) -> float:
    """Half a unit of the last digit of a number as shown (``0.80`` -> 0.005, ``10.2`` -> 0.05)."""
    shown = shown.lstrip("+-<")
    decimals = len(shown.split(".")[1]) if "." in shown else 0
    return 0.5 * 10.0 ** -decimals


def ratio_rounding(x: float) -> float:
    return 0.005 if abs(x) < 10 else 0.05 if abs(x) < 100 else 0.5


@pytest.fixture(scope="module", params=[p.name for p in RUN_DIRS] + ["sample"])
def pages(request):
    if request.param == "sample":
        run = sample_run()
    else:
        run = traceinsight.load(next(p for p in RUN_DIRS if p.name == request.param))
    pairs = [(a, b) for a, b in compared_pairs(run)]
    diff = diff_data(run, run, pairs) if pairs else None
    return {"run": run, "md": render(run, "md"), "html": render(run, "html"),
            "json": json.loads(render(run, "json")), "diff": diff,
            "diff_text": render_diff(diff, "text") if diff else "",
            "diff_md": render_diff(diff, "md") if diff else ""}


def _md_mode_table(md: str) -> dict[str, list[str]]:
    """The markdown report's mode table: mode -> its cells."""
    section = md.split("\n## Modes\n", 1)[1].split("\n## ", 1)[0]
    out = {}
    for ln in section.splitlines():
        if ln.startswith("| `"):
            cells = [c.strip() for c in ln.strip().strip("|").split(" | ")]
            out[cells[0].strip("`")] = cells
    return out


def test_the_ratio_to_the_fastest_reads_the_same_in_markdown_html_json(pages):
    doc = pages["json"]
    table = _md_mode_table(pages["md"])
    for m in doc["modes"]:
        if m["status"] != "ok" or m.get("median_ms") is None:
            continue
        cell = table[m["name"]][3]
        # the HTML table holds the same text
        assert f"<td>{cell}</td>" in pages["html"] or f">{cell}<" in pages["html"], (m["name"], cell)
        hit = RATIO.fullmatch(cell)
        assert hit, cell
        r = num(hit.group(1))
        assert r == pytest.approx(m["ratio"], abs=ratio_rounding(r))
        # the ratio is the ratio of the medians shown in the same row
        fastest = next(x for x in doc["modes"] if x.get("vs_fastest") == "fastest")
        shown = num(table[m["name"]][1]) / num(table[fastest["name"]][1])
        assert r == pytest.approx(shown, rel=0.01, abs=ratio_rounding(r))
        if hit.group(2):    # an interval holds its estimate strictly inside
            lo, hi = num(hit.group(2)), num(hit.group(3))
            assert m["ratio_lo"] < m["ratio"] < m["ratio_hi"]
            assert lo <= r <= hi
            # "slower" only when the interval orders the two
            if m.get("vs_fastest") == "slower":
                assert lo >= 1.0
        else:
            assert m.get("vs_fastest") in ("fastest", "no measurable difference")
        # the verdict is the comparison's (the one every screen and finding reads)
        if m.get("vs_fastest") in ("slower", "no measurable difference"):
            c = pages["run"].compare(m["name"], fastest["name"])
            assert (m["vs_fastest"] == "slower") == (c.significant and c.ratio > 1.0), m["name"]


def test_a_pairs_ratio_is_the_same_in_findings_diff_and_json(pages):
    run = pages["run"]
    quoted: dict[tuple[str, str], str] = {}
    for f in pages["json"]["findings"]:
        for hit in VS.finditer(f["evidence"]):
            a, a_ms, b, b_ms, r = hit.group(1, 2, 3, 4, 5)
            if a not in run.modes or b not in run.modes:
                continue
            ratio = num(r)
            assert ratio == pytest.approx(num(a_ms) / num(b_ms), rel=0.01, abs=ratio_rounding(ratio))
            if hit.group(6):
                assert num(hit.group(6)) <= ratio <= num(hit.group(7))
            quoted[(a, b)] = f"{r}×" + (f" [{hit.group(6)}, {hit.group(7)}]" if hit.group(6) else "")
    # the same pair in the mode table (against the fastest) reads the same
    table = _md_mode_table(pages["md"])
    for (a, b), text in quoted.items():
        if b == run.fastest and a in table:
            assert table[a][3].startswith(text), (a, b, text, table[a][3])
    diff = pages["diff"]
    if diff is None:
        return
    rows = [ln for ln in pages["diff_text"].splitlines()]
    for p in diff["pairs"]:
        # the diff writes B against A: B/A, the reciprocal of the run's a-against-b comparison
        c = run.compare(p["b"], p["a"])
        assert p["ratio"] == pytest.approx(c.ratio, rel=1e-5) and p["significant"] == c.significant
        shown = next(ln for ln in rows if ln.startswith(p["a"]) and f" {p['b']} " in ln
                     and "×" in ln)
        cell = RATIO.search(shown)
        assert num(cell.group(1)) == pytest.approx(c.ratio, abs=ratio_rounding(c.ratio))
        if (p["b"], p["a"]) in quoted:
            assert cell.group(0).startswith(quoted[(p["b"], p["a"])].split(" [")[0])
        # the sentence quotes the same ratio when it quotes one
        for hit in RATIO.finditer(p["sentence"]):
            assert num(hit.group(1)) == pytest.approx(c.ratio, abs=ratio_rounding(c.ratio))
        # a difference the data cannot order is never called significant in the table
        if "no measurable difference" in p["sentence"]:
            assert not p["significant"]


def _check_breakdown(text: str) -> int:
    n = 0
    for hit in BREAKDOWN.finditer(text):
        shown = [x.split(" ")[1] for x in hit.group(2).rstrip(", ").split(", ")]
        total, parts = num(hit.group(1).lstrip("+")), [num(x.lstrip("+")) for x in shown]
        slack = rounding(hit.group(1)) + sum(rounding(x) for x in shown)
        assert sum(parts) == pytest.approx(total, abs=slack + 1e-9), hit.group(0)
        n += 1
    return n


def test_every_breakdown_of_a_difference_adds_up_to_it(pages):
    texts = [f["evidence"] for f in pages["json"]["findings"]] + [pages["diff_text"], pages["diff_md"]]
    for t in texts:
        _check_breakdown(t)
    diff = pages["diff"]
    for p in (diff or {}).get("pairs", []):
        cats = [c["delta_ms"] for c in p["categories"] if c["delta_ms"] is not None]
        if p.get("step_delta_ms") is not None and cats:
            assert sum(cats) == pytest.approx(p["step_delta_ms"], abs=1e-4)   # JSON keeps 6 digits
            if p.get("categories_corrected"):     # the user's step: the medians' difference
                assert p["step_delta_ms"] == pytest.approx(p["delta_ms"], abs=1e-4)


def test_the_category_table_adds_up_to_its_total_and_the_bars_show_it(pages):
    md = pages["md"]
    if "## Where the time goes" not in md:
        return
    section = md.split("\n## Where the time goes\n", 1)[1].split("\n## ", 1)[0]
    section = section.split("The typical step", 1)[0]    # the means' table, not the medians'
    for ln in section.splitlines():
        if not ln.startswith("| `"):
            continue
        cells = [c.strip() for c in ln.strip("|").split(" | ")]
        if "not recorded" in cells:
            continue
        shown = [c.split(" ")[0] for c in cells[1:-1] if c != "–"]
        parts, total = [num(x) for x in shown], num(cells[-1])
        slack = rounding(cells[-1]) + sum(rounding(x) for x in shown)
        assert sum(parts) == pytest.approx(total, abs=slack), ln
        # the HTML bar of that mode is labelled with the same total
        assert f">{cells[-1]} ms</text>" in pages["html"], (cells[0], cells[-1])


def test_the_checks_above_find_what_they_check():
    """The parsers match the pages they read (a regex that matched nothing would pass vacuously):
    on the committed conv1d run the findings quote pairs, breakdowns and the diff's table."""
    run = traceinsight.load(DATA / "runs" / "conv1d")
    evidence = " ".join(f.evidence for f in run.findings)
    assert len(VS.findall(evidence)) >= 2
    diff = diff_data(run, run, compared_pairs(run))
    text = render_diff(diff, "text")
    assert _check_breakdown(text) >= 1 and _check_breakdown(evidence) >= 1
    assert len(_md_mode_table(render(run, "md"))) == len(run.modes)
