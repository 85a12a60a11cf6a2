"""The reports' pictures (traceinsight.report.svg): well-formed SVG, escaped strings, the category
colours of the viewer, the marked steps (first, stalls, retraces) where the steps put them, the
hosts' skew, and the markdown report's SVG files beside it."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import replace

import pandas as pd

from traceinsight import cli, present
from traceinsight.analysis.step_marks import STALL_FACTOR, step_marks
from traceinsight.derive import complete
from traceinsight.model import CATEGORIES, Run
from traceinsight.report import render
from traceinsight.report.data import build, report_data
from traceinsight.report.svg import category_bars, figures, host_skew, step_chart
from traceinsight.testing import make_mode, sample_run

EVIL = '<script>alert("x")</script>'
SVG_NS = "{http://www.w3.org/2000/svg}"


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG_NS}svg"
    return root


def steps_frame(walls: list[float], tracing: dict[int, float]) -> pd.DataFrame:
    rows = []
    for i, w in enumerate(walls):
        t = tracing.get(i, 0.0)
        row = {"step_num": i, "start_ps": i * 10**9, "end_ps": i * 10**9 + int(w * 1e9),
               "wall_ms": w, "first": i == 0, **{c: 0.0 for c in CATEGORIES}}
        row["op"], row["tracing"] = w - t, t
        rows.append(row)
    return pd.DataFrame(rows)


def marked_mode(name: str = "loop"):
    # step 0 is the first step (120 ms), step 7 a stall (3x the 10 ms median), step 12 retraced
    walls = [120.0] + [10.0] * 19
    walls[7] = 30.0
    walls[12] = 14.0
    m = make_mode(name, {"op": 10.0})
    return m.replace(steps=steps_frame(walls, {0: 100.0, 12: 4.0}))


def test_step_marks_put_the_first_step_stalls_and_retraces_where_they_are():
    recs = marked_mode().table("steps").records()
    marks = step_marks(recs)
    assert [m.step_num for m in marks if m.first] == [0]
    assert [m.step_num for m in marks if m.stall] == [7]          # 30 > 1.5 x 10; 14 is not
    assert [(m.step_num, m.retrace_ms) for m in marks if m.retrace_ms] == [(12, 4.0)]
    assert 14.0 < STALL_FACTOR * 10.0 < 30.0


def test_step_chart_draws_one_column_per_step_and_the_marks():
    document = build(complete(Run(None, "r", {"loop": marked_mode()})))
    svg = step_chart(document.data["modes"][0], document.step_marks["loop"])
    root = parse(svg)
    titles = [t.text or "" for t in root.iter(f"{SVG_NS}title")]
    step_titles = [t for t in titles if " · step " in t]
    assert len(step_titles) == 20
    assert sum("stall" in t for t in step_titles) == 1 and "step 7: 30.0 ms" in \
        next(t for t in step_titles if "stall" in t)
    assert [t.split(":")[0] for t in step_titles if "retraced" in t] == ["loop · step 12"]
    assert "first step 120 ms" in "".join(root.itertext())
    # the first step (12x the median) is drawn at the scale's top with a ▲, not flattening the rest
    assert "▲" in "".join(root.itertext())


def test_category_colours_are_the_viewers():
    svg = category_bars(report_data(sample_run())["modes"])
    parse(svg)
    fills = set(re.findall(r'fill="(#[0-9a-f]{6})"', svg))
    for c in ("op", "python", "dispatch", "input"):
        assert present.CATEGORY_COLORS[c] in fills


def test_every_string_in_the_pictures_is_escaped():
    run = sample_run()
    modes = {EVIL: replace(marked_mode(EVIL), name=EVIL), **run.modes}
    hostile = complete(Run(None, EVIL, modes, run.manifest))
    for _stem, _alt, svg in figures(build(hostile)):
        assert "<script" not in svg and "onerror" not in svg
        parse(svg)
    page = render(hostile, "html")
    assert "<script" not in page


def test_host_skew_colours_each_step_by_its_slowest_host():
    session = {"session": EVIL, "hosts": [{"host": "a"}, {"host": "b"}],
               "steps": [{"step_num": 1, "slowest": "a", "wall_ms": {"a": 12.0, "b": 10.0}},
                         {"step_num": 2, "slowest": "b", "wall_ms": {"a": 10.0, "b": 15.0}},
                         {"step_num": 3, "slowest": None, "wall_ms": {"a": 10.0, "b": 10.0}}]}
    root = parse(host_skew(session))
    tips = [t.text for t in root.iter(f"{SVG_NS}title")]
    assert tips == ["step 1: slowest a · skew 2.00 ms · a 12.0, b 10.0 ms",
                    "step 2: slowest b · skew 5.00 ms · a 10.0, b 15.0 ms",
                    "step 3: slowest (tie) · skew 0 ms · a 10.0, b 10.0 ms"]


def test_html_report_has_the_pictures_inline():
    page = render(sample_run(), "html")
    assert page.count("<svg") == 1 + 3      # the categories, then one step chart per ok mode
    assert "Steps over the run" in page
    assert "http" not in re.sub(r'xmlns="http://www.w3.org/2000/svg"', "", page)


def test_markdown_report_to_a_file_links_svg_files_beside_it(tmp_path, monkeypatch):
    monkeypatch.setattr("traceinsight.report.load_run", lambda path: sample_run())
    out = tmp_path / "my report.md"
    assert cli.main(["report", "anything", "-o", str(out)]) == 0
    text = out.read_text()
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert len(links) == 4
    from urllib.parse import unquote
    for link in links:
        parse((tmp_path / unquote(link)).read_text())
    assert "| mode |" in text        # the tables stay


def test_step_charts_stop_at_a_dozen_modes():
    from traceinsight.report.svg import MAX_STEP_CHARTS
    modes = {f"host{i:03d}": make_mode(f"host{i:03d}", {"op": 1.0 + i / 100}, n_steps=5)
             for i in range(MAX_STEP_CHARTS + 3)}
    page = render(complete(Run(None, "many", modes)), "html")
    assert page.count("ms per step over the run: host") == MAX_STEP_CHARTS
    assert f"The first {MAX_STEP_CHARTS} of {MAX_STEP_CHARTS + 3} modes" in page


def test_markdown_has_the_category_bars_as_a_mermaid_chart_github_draws():
    run = sample_run()
    hostile = complete(Run(None, "r", {EVIL: replace(run.modes["eager"], name=EVIL),
                              "function": run.modes["function"]}))
    md = render(hostile, "md")
    chart = md.split("```mermaid\n")[1].split("```")[0]
    assert "<" not in chart and ">" not in chart
    axis = next(line for line in chart.splitlines() if "x-axis" in line)
    assert axis.count('"') == 4                      # two labels, nothing breaks out of them
    bars = [line for line in chart.splitlines() if line.strip().startswith("bar [")]
    # the running sums of the categories (op at the bottom): the first bar is the whole step
    first = [float(v) for v in bars[0].split("[")[1].rstrip("]").split(",")]
    last = [float(v) for v in bars[-1].split("[")[1].rstrip("]").split(",")]
    doc = report_data(hostile)
    cats = [m["category_means"] for m in doc["modes"]]     # the bars and tables show means
    assert first == [float(f"{sum(v for v in c.values() if v):.6g}") for c in cats]
    assert last == [float(f"{c['op']:.6g}") for c in cats]
    assert "| mode | op |" in md                       # the table stays


def test_the_bars_say_traced_where_no_untraced_timing_exists():
    """A trace captured without traceinsight has no untraced timing: its bars are its traced
    steps, the profiler's cost inside, and every title says so; a captured run's say untraced,
    and a run holding both says which is which. The traced bar adds up to the mean traced step."""
    from pathlib import Path

    import traceinsight
    from traceinsight.report.svg import BARS_ALT, MERMAID_TITLE
    data = Path(__file__).parent / "data"
    foreign = traceinsight.load(data / "jax" / "jax_cuda_mlp.xplane.pb", use_cache=False)
    captured = traceinsight.load(data / "runs" / "conv1d")
    both = complete(Run(None, "both", {**captured.modes,
                                       "jax": replace(next(iter(foreign.modes.values())), name="jax")}))
    from traceinsight.present import DrawnBasis
    for run, basis in ((foreign, DrawnBasis.TRACED), (captured, DrawnBasis.UNTRACED),
                       (both, DrawnBasis.MIXED)):
        md = render(run, "md")
        assert f'title "{MERMAID_TITLE[basis]}"' in md
        alts = [alt for _, alt, _ in figures(build(run))]
        assert alts[0] == BARS_ALT[basis]
        assert ("The traced step: mean ms/step" in md) == (basis is DrawnBasis.TRACED)
    m = next(iter(foreign.modes.values()))
    steady = m.steady_steps
    assert abs(sum(m.category_means().values()) - float(steady["wall_ms"].mean())) < 1e-9
