"""Imported by Python at startup when ``traceinsight run`` put this folder (and only it) first on
PYTHONPATH; it is the folder's only module, so nothing else of traceinsight shadows the script's imports.

It gives the script back its own environment (PYTHONPATH as it was, this folder off ``sys.path``,
so the script's children run untouched), installs the step recorder (``../agent.py``, loaded by
path: this interpreter may have no traceinsight, or another one), then runs the ``sitecustomize``
this one shadows, if the interpreter has one (Debian's, a venv's)."""


def _install() -> None:
    import importlib.util
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    before = os.environ.pop("TRACEINSIGHT_RUN_PYTHONPATH", None)
    if before is not None:
        if before:
            os.environ["PYTHONPATH"] = before
        else:
            os.environ.pop("PYTHONPATH", None)
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    try:
        path = os.path.join(os.path.dirname(here), "agent.py")
        spec = importlib.util.spec_from_file_location("_traceinsight_run_agent", path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {path}")
        agent = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = agent
        spec.loader.exec_module(agent)
    except Exception as e:  # never break the user's script
        os.environ.pop("TRACEINSIGHT_RUN_SPEC", None)
        print(f"traceinsight: the run hook could not load ({type(e).__name__}: {e}); "
              "the script runs untraced", file=sys.stderr)
        return
    agent.install()
    agent.chain_sitecustomize(__file__)


_install()
