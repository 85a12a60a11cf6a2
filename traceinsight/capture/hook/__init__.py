"""The startup hook of ``traceinsight run``: this folder goes first on the script's PYTHONPATH so
Python imports its ``sitecustomize`` at startup (see ``agent``)."""
