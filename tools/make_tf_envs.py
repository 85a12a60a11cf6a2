"""One environment per TensorFlow version, and small real captures from each (the version matrix).

    .venv/bin/python tools/make_tf_envs.py                       # envs for every version below
    .venv/bin/python tools/make_tf_envs.py 2.15.1 --capture OUT  # + small captures into OUT/tf-2.15.1-*
    .venv/bin/python tools/make_tf_envs.py 2.16.2 --commit       # + the small runs kept in tests/data/versions

Each environment is a plain venv under ``.tf-envs/`` (git-ignored; ``--cache`` for another folder)
holding ``tensorflow-cpu==<version>`` and nothing of traceinsight: captures drive it through
``traceinsight capture --python <env>/bin/python``, as a user with that TensorFlow would. It is
made once and reused while ``import tensorflow`` works in it. ``--tf-keras`` adds tf-keras of the
same minor version (without its dependencies: it declares the full ``tensorflow`` package) for the
``tf1:`` / ``tf_keras:`` modes on 2.16+; the own Keras of 2.12 - 2.15 is Keras 2 and needs nothing.
Python 3.11 wheels exist for every version listed (2.12.1 is the oldest with them).

The captures: a function workload (eager, function, XLA, v1-session) and a Keras one (fit with
numpy input, plus the TF1 modes where Keras 2 is there), with few steps, short host traces and no
python tracer, so the committed folders stay a few hundred KB. Exit status: the worst step's.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VERSIONS = ["2.12.1", "2.13.1", "2.14.1", "2.15.1", "2.16.2", "2.21.0"]
DEFAULT_CACHE = ROOT / ".tf-envs"
COMMITTED = ROOT / "tests" / "data" / "versions"

# short, small captures: a few steps, one round, no python tracer
SMALL = ["--min-steps", "5", "--min-time", "0.2", "--max-time", "3", "--warmup", "2", "--rounds", "1",
         "--host-trace-ms", "1500", "--host-max-steps", "6", "--no-python-tracer"]
CAPTURES = {
    # name: (workload, modes; tf1 modes only where Keras 2 is there)
    "fn": ("tests/data/versions/fn_small.py", "eager,function,xla,v1-session"),
    "keras": ("tests/data/versions/keras_small.py", "fit,xla"),
    "tf1": ("tests/data/versions/keras_small.py", "tf1:predict_on_batch,tf1:fit"),
}


def _keras2_is_tf_keras(version: str) -> bool:
    """TF 2.12 - 2.15: ``tf.keras`` (the ``keras`` package) is Keras 2 itself."""
    major, minor = (int(p) for p in version.split(".")[:2])
    return (major, minor) <= (2, 15)


def env_python(cache: Path, version: str) -> Path:
    return cache / f"tf-{version}" / "bin" / "python"


def _tf_works(python: Path, version: str) -> bool:
    if not python.exists():
        return False
    r = subprocess.run([str(python), "-c", "import tensorflow as tf; print(tf.__version__)"],
                       capture_output=True, text=True, env=_quiet_env())
    return r.returncode == 0 and r.stdout.strip().splitlines()[-1:] == [version]


def _quiet_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    env.pop("PYTHONPATH", None)
    return env


def make_env(version: str, cache: Path = DEFAULT_CACHE, tf_keras: bool = False, log=print) -> Path:
    """The venv with tensorflow-cpu==version (made if missing or broken); its python's path."""
    python = env_python(cache, version)
    if not _tf_works(python, version):
        folder = python.parent.parent
        if folder.exists():
            shutil.rmtree(folder)
        folder.parent.mkdir(parents=True, exist_ok=True)
        t0 = time.monotonic()
        subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", f"tensorflow-cpu=={version}"],
                       check=True)
        log(f"tf-{version}: made in {time.monotonic() - t0:.0f} s")
    minor = ".".join(version.split(".")[:2])
    if tf_keras and not _keras2_is_tf_keras(version):
        r = subprocess.run([str(python), "-c", "import tf_keras"], capture_output=True, env=_quiet_env())
        if r.returncode != 0:
            subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", f"tf-keras=={minor}.*"],
                           check=True)
    return python


def capture(version: str, python: Path, out: Path, names: list[str], log=print) -> int:
    """``traceinsight capture --python`` of each named capture into ``out/tf-<version>-<name>``."""
    from traceinsight.cli import main

    keras2 = subprocess.run([str(python), "-c", "import tf_keras"], capture_output=True,
                            env=_quiet_env()).returncode == 0 or _keras2_is_tf_keras(version)
    worst = 0
    for name in names:
        workload, modes = CAPTURES[name]
        if name == "tf1" and not keras2:
            log(f"tf-{version}: {name} skipped (no Keras 2 in this env: --tf-keras)")
            continue
        target = out / f"tf-{version}-{name}"
        if target.exists():
            shutil.rmtree(target)
        t0 = time.monotonic()
        rc = main(["capture", str(ROOT / workload), "--python", str(python), "--modes", modes,
                   "--out", str(out), "--name", target.name] + SMALL)
        (target / ".capture.lock").unlink(missing_ok=True)   # released; nothing to keep
        log(f"tf-{version}-{name}: exit {rc} in {time.monotonic() - t0:.0f} s")
        worst = max(worst, rc)
    return worst


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("versions", nargs="*", default=VERSIONS)
    p.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    p.add_argument("--tf-keras", action="store_true", help="add tf-keras (2.16+) for the tf1: modes")
    p.add_argument("--capture", type=Path, metavar="OUT", help="capture the small runs into OUT")
    p.add_argument("--commit", action="store_true", help=f"capture into {COMMITTED.relative_to(ROOT)}")
    p.add_argument("--only", default=",".join(CAPTURES), help="which captures (default: all)")
    args = p.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    worst = 0
    for v in args.versions:
        python = make_env(v, args.cache, args.tf_keras)
        out = COMMITTED if args.commit else args.capture
        if out is not None:
            worst = max(worst, capture(v, python, out, [n for n in args.only.split(",") if n]))
    return worst


if __name__ == "__main__":
    sys.exit(main())
