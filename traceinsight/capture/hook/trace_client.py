"""Trace one profiler server into a logdir: ``python trace_client.py JSON``.

Run as its own process, by path, with any Python: the standard library plus, first found, xprof's
profiler client; else the profiler's gRPC service called directly through ``grpcio`` (which every
TensorFlow depends on: ``grpc_trace`` below, the request encoded here, no other package); else
TensorFlow's own client (same call as xprof's; it keeps the tracer levels on 2.15 / 2.16, see
``traceinsight.capture.compat``). Its own process, so the client's stdout
line ("Starting to trace for N ms ...") and INFO log go to the caller's log file, not to the
traced program's output, and a client crash is an exit status, not a dead workload.

Exit status 0: traced; 2: bad arguments; 3: no client; 4: the trace failed (one line on stderr).
"""

import json
import sys


def _varint(n):
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number, value):
    """One protobuf field: an int (varint) or bytes (length-delimited)."""
    if isinstance(value, int):
        return _varint(number << 3) + _varint(value)
    return _varint((number << 3) | 2) + _varint(len(value)) + value


def profile_request(duration_ms, repository_root, session_id, host_name, levels):
    """A serialized ``tensorflow.ProfileRequest`` (tsl/profiler/protobuf/profiler_service.proto:
    duration_ms 1, max_events 2, tools 3, opts 4, repository_root 5, session_id 6, host_name 7)
    whose ``opts`` is a ``ProfileOptions`` (profiler_options.proto: include_dataset_ops 1,
    host_tracer_level 2, device_tracer_level 3, python_tracer_level 4, version 5, device_type 6,
    duration_ms 9), as xprof's client fills it."""
    opts = (_field(5, 1) + _field(1, 1) + _field(2, levels.get("host_tracer_level", 2))
            + _field(3, levels.get("device_tracer_level", 1))
            + _field(4, levels.get("python_tracer_level", 0)) + _field(9, duration_ms))
    return (_field(1, duration_ms) + _field(2, 1000000) + _field(3, b"trace_viewer") + _field(4, opts)
            + _field(5, repository_root.encode()) + _field(6, session_id.encode())
            + _field(7, host_name.encode()))


def grpc_trace(address, logdir, worker_list, include_dataset_ops, duration_ms, attempts, levels):
    """``ProfilerService.Profile`` on ``address``: the server records for ``duration_ms`` with the
    given levels and saves ``<logdir>/plugins/profile/<session>/<host>_<port>.xplane.pb`` itself
    (checked on TF 2.12, 2.18 and 2.21: the levels are kept). Retried ``attempts`` times while the
    server is not up yet. Same arguments as xprof's client."""
    import os
    import time

    import grpc
    root = os.path.join(logdir, "plugins", "profile")
    channel = grpc.insecure_channel(address)
    call = channel.unary_unary("/tensorflow.ProfilerService/Profile",
                               request_serializer=lambda b: b, response_deserializer=lambda b: b)
    for attempt in range(max(1, attempts)):
        session = time.strftime("%Y_%m_%d_%H_%M_%S")
        request = profile_request(duration_ms, root, session, address.replace(":", "_"), levels)
        try:
            call(request, timeout=duration_ms / 1000 + 120)
        except grpc.RpcError:
            if attempt + 1 >= max(1, attempts):
                raise
            time.sleep(1.0)
            continue
        return


def _client():
    try:
        from xprof.convert import _pywrap_profiler_plugin
        return "xprof", _pywrap_profiler_plugin.trace
    except ImportError:
        pass
    try:
        import grpc  # noqa: F401  (TensorFlow's own dependency)
        return "grpc", grpc_trace
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
        print(f"trace_client: no profiler client (xprof, grpcio or TensorFlow) in {sys.executable}: {e}",
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
