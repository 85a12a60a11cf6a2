"""A Run and a mode in Jupyter (``_repr_html_``: the HTML report in a sandboxed frame) and in a
plain REPL (``show()``: the text summary); the notebook is executed headlessly by nbclient."""

from __future__ import annotations

import html
import io
import re

import pytest

from traceinsight.derive import complete
from traceinsight.model import Run
from traceinsight.report import render
from traceinsight.report.notebook import NOTEBOOK
from traceinsight.testing import make_mode, sample_run

EVIL = '<script>alert("x")</script>'


def split(shown: str) -> tuple[str, str]:
    """The display: the overview above the frame, and the frame (the whole report)."""
    m = re.fullmatch(r'(.*)\n(<iframe title="[^"<>]*" sandbox="" style="[^"<>]*" srcdoc="[^"<>]*"></iframe>)',
                     shown, re.S)
    assert m, shown[:300]
    return m.group(1), m.group(2)


def srcdoc(shown: str) -> str:
    m = re.fullmatch(r'<iframe title="[^"<>]*" sandbox="" style="[^"<>]*" srcdoc="([^"<>]*)"></iframe>',
                     split(shown)[1])
    assert m, shown[:300]
    return html.unescape(m.group(1))


def test_run_displays_as_the_html_report_itself():
    run = sample_run()
    assert srcdoc(run._repr_html_()) == render(run, "html")


def test_the_display_opens_on_the_modes_and_the_chart():
    """Before the report's frame (which opens on the page's title), the cell shows the summary,
    the modes table with every mode and the category bars, and not the environment."""
    run = sample_run()
    top, _ = split(run._repr_html_())
    assert top.index("<table>") < top.index("<svg")
    assert all(f"<code>{name}</code>" in top for name in run.modes)
    assert "median ms/step" in top and "Environment" not in top and "<script" not in top


def test_a_mode_displays_as_its_own_report():
    mode = sample_run().modes["eager"]
    page = srcdoc(mode._repr_html_())
    assert page == render(complete(Run(None, "eager", {"eager": mode}, source="traces")), "html")
    assert "<svg" in page


def test_hostile_names_stay_inside_the_frame_as_text():
    run = complete(Run(None, EVIL, {EVIL: make_mode(EVIL, {"op": 1.0})}), display=NOTEBOOK)
    top, frame = split(run._repr_html_())
    assert "<script" not in top and "&lt;script&gt;" in top
    assert "<script" not in frame and "<" not in frame[len("<iframe"):-len("</iframe>")]
    assert "<script" not in srcdoc(run._repr_html_())      # escaped again inside the page


def test_show_prints_the_text_summary():
    out = io.StringIO()
    sample_run().show(file=out)
    text = out.getvalue()
    assert "ms per step" in text and "eager" in text and "xla" in text
    out = io.StringIO()
    sample_run().modes["xla"].show(file=out)
    assert "xla" in out.getvalue() and "eager" not in out.getvalue()


def test_notebook_executes_headlessly_and_shows_the_report():
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("from traceinsight.testing import sample_run\n"
                                          "run = sample_run()\nrun"),
                nbformat.v4.new_code_cell("run.modes['function']"),
                nbformat.v4.new_code_cell("run.show()")]
    from jupyter_client.kernelspec import NATIVE_KERNEL_NAME
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name=NATIVE_KERNEL_NAME,
                                     resources={"metadata": {"path": "."}})
    client.execute()
    run_out = nb.cells[0].outputs[0]["data"]
    assert srcdoc(run_out["text/html"]) == render(sample_run(), "html")
    mode_out = nb.cells[1].outputs[0]["data"]["text/html"]
    assert "function" in srcdoc(mode_out)
    # rich writes to a notebook as a display (text/plain beside its HTML), to a REPL as text
    shown = "".join(o.get("text", "") + o.get("data", {}).get("text/plain", "")
                    for o in nb.cells[2].outputs)
    assert "ms per step" in shown and "xla" in shown


def test_a_run_made_without_a_display_shows_its_plain_repr():
    """The display is a renderer the run is given (``traceinsight.load`` gives it); the model and
    the analysis import no renderer, so a run completed by hand has none and says so."""
    run = complete(Run(None, "r", {"eager": make_mode("eager", {"op": 1.0})}))
    assert run._repr_html_() is None and run.modes["eager"]._repr_html_() is None
    with pytest.raises(TypeError, match="without a display"):
        run.show(file=io.StringIO())
