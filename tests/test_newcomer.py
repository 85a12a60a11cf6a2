"""What a new user runs into first: output paths that cannot be written, folders without traces,
output format names, piped tables, and one number formatted one way."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
from rich.console import Console

from traceinsight import cli, present, runfolder
from traceinsight.derive import complete
from traceinsight.model import Run
from traceinsight.report import terminal
from traceinsight.testing import make_mode, sample_run

DATA = Path(__file__).parent / "data"
RUN = DATA / "runs" / "conv1d"
TRACE = next((DATA / "foreign").rglob("*.xplane.pb"))


def _one_line_error(capsys, rc: int) -> str:
    out, err = capsys.readouterr()
    assert rc == 2 and "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize("mode", [[], ["--mode", "eager"]])
def test_export_to_a_folder_that_cannot_be_made(capsys, tmp_path, mode):
    blocker = tmp_path / "file"
    blocker.write_text("")
    rc = cli.main(["export", str(RUN), *mode, "-o", str(blocker / "out")])
    assert "cannot create the output folder" in _one_line_error(capsys, rc)


def test_a_folder_with_traces_only_deep_down_has_no_traces(capsys, tmp_path):
    deep = tmp_path.joinpath(*"abcdefgh")
    deep.mkdir(parents=True)
    shutil.copy(TRACE, deep / "t.xplane.pb")
    rc = cli.main(["analyze", str(tmp_path)])
    assert "no traces found" in _one_line_error(capsys, rc)
    # the same trace within reach (a logdir's plugins/profile/<session>/) is found
    session = tmp_path / "logdir" / "plugins" / "profile" / "s1"
    session.mkdir(parents=True)
    shutil.copy(TRACE, session / "host.xplane.pb")
    assert runfolder.find_xplanes(tmp_path) == [session / "host.xplane.pb"]


def test_xprof_tool_caches_are_not_traces(tmp_path):
    shutil.copy(TRACE, tmp_path / "a.xplane.pb")
    cache = tmp_path / "a.xplane.pb_kernel_stats"
    cache.mkdir()
    shutil.copy(TRACE, cache / "a.xplane.pb")
    assert runfolder.find_xplanes(tmp_path) == [tmp_path / "a.xplane.pb"]


def test_too_many_folders_is_one_line(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(runfolder, "MAX_FOLDERS", 3)
    for d in "abcd":
        (tmp_path / d).mkdir()
    rc = cli.main(["analyze", str(tmp_path)])
    assert "folders searched for traces" in _one_line_error(capsys, rc)


@pytest.mark.parametrize("name,said", [("x.txt", "the extension '.txt' is not one of .md"),
                                       ("x", "it has no extension; use .md")])
def test_report_names_the_formats_it_writes(capsys, tmp_path, name, said):
    rc = cli.main(["report", str(RUN), "-o", str(tmp_path / name)])
    line = _one_line_error(capsys, rc)
    assert said in line and "--format: md, html, json" in line and "'text'" not in line


def test_piped_tables_keep_names_and_headers_whole():
    long = "predict_on_batch_" * 4       # wider than 80 columns leave for it
    run = complete(Run(None, "r", {long: make_mode(long, {"op": 18.0}, untraced_ms=18.0),
                          **sample_run().modes}))
    out = io.StringIO()
    terminal.show(run, console=Console(file=out, width=80, force_terminal=False))
    text = out.getvalue()
    assert any(long in line for line in text.splitlines())
    assert any("×fastest [95% CI]" in line for line in text.splitlines())
    # on a terminal of the same width the name folds instead (rich's own layout)
    out = io.StringIO()
    terminal.show(run, console=Console(file=out, width=80, force_terminal=True))
    first_table = out.getvalue().split("where a steady step")[0]
    assert not any(long in line for line in first_table.splitlines())


def test_progress_line_formats_the_median_as_the_tables_do():
    from traceinsight.commands.capture import median_detail
    for v in (18.0, 4.6125, 0.0123, 123.4):
        assert median_detail({"median_ms": v}) == f"{present.ms(v)} ms/step"
    assert median_detail({"median_ms": 18.0}) == "18.0 ms/step"


def test_the_tools_own_frames_are_grouped_as_traceinsight():
    import traceinsight
    from traceinsight.analysis.hotspots import frame_group
    from traceinsight.capture import keras_driver
    from traceinsight.pyfiles import path_group
    assert path_group(keras_driver.__file__, workload=None) == "traceinsight"
    # traces recorded before the group existed: by the capture's own module names
    assert frame_group("keras_driver.py", frozenset(), {"layer.py": ["keras"]}) == "traceinsight"
    assert frame_group("keras_driver.py", frozenset({"keras_driver.py"}), None) == "user"
    run = traceinsight.load(RUN, use_cache=False)
    own = run.hotspots()
    own = own[own["file"].isin(["runner.py", "keras_driver.py", "function_driver.py", "steps.py"])]
    assert len(own) and set(own["group"]) == {"traceinsight"}


def test_readme_describes_export_once_as_it_writes(tmp_path):
    readme = (Path(__file__).parent.parent / "docs" / "reports.md").read_text(encoding="utf-8")
    paragraphs = [p for p in readme.split("\n\n") if p.startswith("`traceinsight export RUN --mode M")]
    assert len(paragraphs) == 1 and "writes `trace.json.gz`" in paragraphs[0]
    # and export does write that file by default
    assert cli.main(["export", str(RUN), "--mode", "eager", "--tables", "none",
                     "-o", str(tmp_path)]) == 0
    assert (tmp_path / "trace.json.gz").is_file() and not (tmp_path / "trace.json").exists()


def test_a_bare_traces_report_has_what_the_trace_records():
    import json

    from traceinsight.xplane import XSpace
    logdir = DATA / "gpu_demo"
    files = sorted(logdir.rglob("*.xplane.pb"))
    # the devices, counted from the files with protobuf's own parser (not the tool's reader)
    gpus = sum(p.name.startswith("/device:GPU:") for f in files
               for p in XSpace.FromString(f.read_bytes()).planes)
    md = render_report(logdir, "md")
    env = md.split("## Environment")[1].split("## ")[0]
    assert f"| Devices | {gpus} × GPU (compute capability 7.0" in env and f"over {len(files)} hosts" in env
    assert f"| Hosts traced | {len(files)} |" in env
    assert "34.83.195" not in env            # host names stay out of pasted reports
    doc = json.loads(render_report(logdir, "json"))
    assert doc["environment"]["hostname"] == sorted(f.name[:-10] for f in files)
    one = next((DATA / "foreign" / "keras_tb").rglob("*.xplane.pb"))
    env = render_report(one, "md").split("## Environment")[1].split("## ")[0]
    assert "| Devices | none (host only) |" in env
    assert '"host_tracer_level": 2' in env and "Profile started (UTC)" in env


def render_report(path: Path, fmt: str) -> str:
    import traceinsight
    from traceinsight.report import render
    return render(traceinsight.load(path), fmt)


def test_a_run_folder_cannot_vouch_for_its_own_run_json(tmp_path):
    """run.json is schema-checked on every load: nothing in the run folder (someone else's data)
    can mark a damaged document as already checked."""
    import json

    import traceinsight
    from traceinsight.errors import TraceinsightError
    run = tmp_path / "conv1d"
    shutil.copytree(RUN, run, ignore=shutil.ignore_patterns(".traceinsight"))
    manifest = json.loads((run / "run.json").read_text())
    manifest["modes"]["eager"]["status"] = 12          # wrong
    (run / "run.json").write_text(json.dumps(manifest))
    (run / ".traceinsight").mkdir()
    (run / ".traceinsight" / "validated.json").write_text(json.dumps({"digests": ["0" * 64]}))
    with pytest.raises(TraceinsightError, match="field modes.eager.status"):
        traceinsight.load(run)
