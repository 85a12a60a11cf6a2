"""Reports, diff and export on a real committed run (tests/data/runs/retracing, captured by
``traceinsight capture samples/retracing.py``): golden files of every format, the markdown through a
real parser, the JSON through its schema, the Chrome trace through the trace-event format's rules.

The golden files follow the analysis engine: after an intended change to attribution or rendering,
rewrite them with ``TRACEINSIGHT_UPDATE_GOLDEN=1 .venv/bin/pytest tests/test_report_real.py`` and
read the diff.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from markdown_it import MarkdownIt

from test_report import check_golden, md_tables

RUN = (Path(__file__).parent / "data" / "runs" / "retracing").resolve()

pytest.importorskip("traceinsight.analysis.load", reason="the trace loader is not in this tree")
if not RUN.is_dir():
    pytest.skip(f"{RUN} is not committed", allow_module_level=True)


@pytest.fixture(scope="module")
def run():
    import traceinsight
    # use_cache=False: the analysis cache in the run folder is not byte-identical to a fresh
    # analysis (and CI starts without one); goldens are of the fresh analysis
    return traceinsight.load(RUN, use_cache=False)


@pytest.fixture(scope="module")
def document(run):
    from traceinsight.report.data import build
    return build(run)


@pytest.fixture(scope="module")
def doc(document):
    return document.data


def test_golden_markdown(document):
    from traceinsight.report.markdown import render_document
    check_golden("retracing.md", render_document(document))


def test_golden_html(document):
    from traceinsight.report.html import render_document
    check_golden("retracing.html", render_document(document))


def test_golden_json(doc):
    from traceinsight.report.json import dumps
    # paths depend on where the repository is checked out
    check_golden("retracing.json", dumps(doc).replace(str(RUN), "<run>"))


def test_real_report_says_what_the_sample_is_about(document, doc):
    from traceinsight.report.json import load_schema
    from traceinsight.report.markdown import render_document
    jsonschema.validate(json.loads(json.dumps(doc)), load_schema())
    top = doc["findings"][0]
    assert top["rule"] == "retracing" and top["modes"] == ["function"]
    assert "traced 25 times in 25 calls" in top["evidence"]
    md = render_document(document)
    tables = md_tables(MarkdownIt("commonmark").enable("table").parse(md))
    modes = next(t for t in tables if t[0][0] == "mode" and "median ms/step" in t[0])
    assert [r[0] for r in modes[1:]] == ["eager", "function"]
    assert "hostname" not in md and "python_executable" not in md   # kept out of public issues


def test_real_diff_of_two_modes(run):
    from traceinsight.report import render_diff
    from traceinsight.report.diff import diff_data
    d = diff_data(run, run, [(run.modes["eager"], run.modes["function"])])
    p = d["pairs"][0]
    assert p["significant"] and p["delta_ms"] > 0
    tracing = next(c for c in p["categories"] if c["category"] == "tracing")
    assert tracing["significant"] and tracing["delta_ms"] > 0
    assert p["retraces"][0]["function"] == "step" and p["retraces"][0]["b_traced"] == 25
    assert "tracing" in render_diff(d, "text")


def test_real_chrome_trace_is_trace_event_format(run):
    pytest.importorskip("xprof")
    from traceinsight.report import chrome_trace
    doc = json.loads(chrome_trace.via_xprof(chrome_trace.pass_paths(run.modes["eager"], "host")))
    events = doc["traceEvents"]
    assert events
    for e in events:
        assert e["ph"] in ("X", "i", "M", "C", "B", "E") and isinstance(e["pid"], int)
        if e["ph"] == "X":
            assert isinstance(e["ts"], (int, float)) and e["dur"] >= 0 and "tid" in e
    names = {e["name"] for e in events if e["ph"] == "X"}
    assert {"EagerExecute", "train"} & names or any(n.startswith("train") for n in names)


def test_markdown_cells_of_an_empty_string_are_empty():
    """A kernel with no framework op (XLA's own kernels of a JAX trace) has an empty op cell: an
    empty cell, not a code span of spaces (an empty box on GitHub); other strings stay code."""
    from traceinsight.report.markdown import code
    assert code("") == ""
    assert code("a|b") == "`a\\|b`" and code("`x`") == "`` `x` ``"
    import traceinsight
    from traceinsight.report import render
    data = Path(__file__).parent / "data" / "jax" / "jax_cuda_mlp.xplane.pb"
    md = render(traceinsight.load(data, use_cache=False), "md")
    assert "`  `" not in md and "|  |  | `gemm_fusion_dot` |" in md
