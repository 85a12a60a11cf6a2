"""Prints what the script and a child Python it starts see of traceinsight run's hook (JSON)."""
import json
import os
import subprocess
import sys

import tensorflow as tf  # noqa: F401  (the hook wraps TensorFlow on import)

CHILD = ("import json, os, sys; print(json.dumps({'pythonpath': os.environ.get('PYTHONPATH'), "
         "'vars': sorted(k for k in os.environ if k.startswith('TRACEINSIGHT')), "
         "'path': sys.path, 'hook': '_traceinsight_run_agent' in sys.modules}))")

child = json.loads(subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                                  check=True).stdout)
print(json.dumps({"pythonpath": os.environ.get("PYTHONPATH"),
                  "vars": sorted(k for k in os.environ if k.startswith("TRACEINSIGHT")),
                  "path": sys.path, "child": child}))
