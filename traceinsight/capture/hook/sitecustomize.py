"""Imported by Python at startup when ``traceinsight run`` put this folder first on PYTHONPATH.

It installs the step recorder (``traceinsight.capture.hook.agent``) and then runs the
``sitecustomize`` this one shadows, if the interpreter has one (Debian's, a venv's)."""


def _install() -> None:
    import sys
    try:
        from traceinsight.capture.hook import agent
    except Exception as e:  # never break the user's script
        print(f"traceinsight: the run hook could not load ({type(e).__name__}: {e}); "
              "the script runs untraced", file=sys.stderr)
        return
    agent.install()
    agent.chain_sitecustomize(__file__)


_install()
