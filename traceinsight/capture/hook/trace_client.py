"""Trace one profiler server into a logdir: ``python trace_client.py JSON``.

Run as its own process, by path, with any Python: the standard library plus xprof's profiler
client, or else TensorFlow's own (same call, same arguments; TensorFlow's keeps the tracer levels
on 2.15 / 2.16 only, see ``traceinsight.capture.compat``). Its own process, so the client's stdout
line ("Starting to trace for N ms ...") and INFO log go to the caller's log file, not to the
traced program's output, and a client crash is an exit status, not a dead workload.

Exit status 0: traced; 2: bad arguments; 3: no client; 4: the trace failed (one line on stderr).
"""

import json
import sys


def _client():
    try:
        from xprof.convert import _pywrap_profiler_plugin
        return "xprof", _pywrap_profiler_plugin.trace
    except ImportError:
        pass
    from tensorflow.python.profiler.internal import _pywrap_profiler
    trace = getattr(_pywrap_profiler, "trace", None)
    if trace is None:   # TF 2.21 moved its client out (to xprof)
        raise ImportError("this TensorFlow has no profiler client of its own: pip install xprof")
    return "tensorflow", trace


def main(argv):
    try:
        spec = json.loads(argv[1])
        address, logdir = str(spec["address"]), str(spec["logdir"])
        duration_ms, attempts = int(spec["duration_ms"]), int(spec["attempts"])
        levels = {str(k): int(v) for k, v in dict(spec["levels"]).items()}
    except (IndexError, ValueError, KeyError, TypeError) as e:
        print(f"trace_client: bad arguments ({type(e).__name__}: {e})", file=sys.stderr)
        return 2
    try:
        name, trace = _client()
    except ImportError as e:
        print(f"trace_client: no profiler client (xprof or TensorFlow) in {sys.executable}: {e}",
              file=sys.stderr)
        return 3
    print(f"trace_client: {name}'s client, {address}, {duration_ms} ms", file=sys.stderr, flush=True)
    try:
        # (service_addr, logdir, worker_list, include_dataset_ops, duration_ms, attempts, options)
        trace(address, logdir, "", True, duration_ms, attempts, levels)
    except Exception as e:
        msg = str(e).strip().splitlines()
        print(f"trace_client: {type(e).__name__}: {msg[0] if msg else ''}", file=sys.stderr)
        return 4
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
