"""A logdir is searched only where traces can lie: ``<run>/plugins/profile/<session>/``. Other
plugins' folders and anything below a session are never listed (``runfolder.find_xplanes``)."""

from __future__ import annotations

import os
from pathlib import Path

from traceinsight import runfolder


def test_only_folders_that_can_hold_traces_are_listed(tmp_path, monkeypatch):
    logdir = tmp_path / "logdir"
    wanted = []
    for run in ("train", "eval"):
        session = logdir / run / "plugins" / "profile" / "2026_01_01_00_00_00"
        session.mkdir(parents=True)
        (session / "h.xplane.pb").write_bytes(b"x")
        wanted.append(session / "h.xplane.pb")
        # TensorBoard's other plugins, and what others leave inside a session: never listed
        for d in (logdir / run / "plugins" / "scalars" / "a" / "b",
                  session / "sub" / "deeper", session / "h.xplane.pb_kernel_stats"):
            d.mkdir(parents=True)
            (d / "copy.xplane.pb").write_bytes(b"x")
    (logdir / ".hidden").mkdir()
    (logdir / ".hidden" / "x.xplane.pb").write_bytes(b"x")
    listed: list[Path] = []
    scandir = os.scandir

    def counting(path):
        listed.append(Path(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", counting)
    assert runfolder.find_xplanes(logdir) == sorted(wanted)
    # the logdir, each run, its plugins, profile and session folders: nothing else
    assert sorted(p.relative_to(logdir).as_posix() for p in listed) == sorted(
        [".", "eval", "train"]
        + [f"{r}/plugins{s}" for r in ("eval", "train")
           for s in ("", "/profile", "/profile/2026_01_01_00_00_00")])


def test_a_session_or_profile_folder_given_itself(tmp_path):
    session = tmp_path / "plugins" / "profile" / "s1"
    session.mkdir(parents=True)
    (session / "a.xplane.pb").write_bytes(b"x")
    (session / "nested").mkdir()
    (session / "nested" / "b.xplane.pb").write_bytes(b"x")
    for folder in (session, session.parent, session.parent.parent, tmp_path):
        assert runfolder.find_xplanes(folder) == [session / "a.xplane.pb"]
