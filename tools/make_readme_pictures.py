"""Draw the README's two pictures from a committed run of the quick-start sample.

    python tools/make_readme_pictures.py [RUN]      # default: tests/data/runs/conv1d

writes ``docs/img/viewer.svg`` (the viewer's overview, as Textual draws it at 120x36) and
``docs/img/report-categories.svg`` (the category chart a markdown report writes beside itself),
so the pictures show what the tool shows on that run, not a mock-up."""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))


async def _viewer(run, out: Path) -> None:
    from traceinsight.tui import get_app

    from tui_runs import settle  # the tests' wait for a fully drawn overview
    app = get_app(run)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        app.save_screenshot(filename=out.name, path=str(out.parent))


def main() -> int:
    import traceinsight
    from traceinsight.cli import main as cli

    run_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "tests" / "data" / "runs" / "conv1d"
    img = ROOT / "docs" / "img"
    img.mkdir(parents=True, exist_ok=True)
    asyncio.run(_viewer(traceinsight.load(run_dir), img / "viewer.svg"))
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.md"
        if cli(["report", str(run_dir), "--format", "md", "-o", str(report)]) not in (0, None):
            return 1
        shutil.copyfile(Path(tmp) / "report_figures" / "categories.svg", img / "report-categories.svg")
    for name in ("viewer.svg", "report-categories.svg"):
        print(img / name, (img / name).stat().st_size, "bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
