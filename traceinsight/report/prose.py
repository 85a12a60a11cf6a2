"""The report's sentences and shared tables, written once for every writer of the report document:
the modes and category tables' columns (``present.ColumnSpec``s, which each writer renders as its
per-mode tables), the notes under them, the environment table's rows. Each takes the
writer's own way of showing a name from a trace (``name`` / ``text`` / ``code``: markdown escapes
or code spans, HTML escaping), so the words are the same in every format and the escaping each
format's own."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from traceinsight import present
from traceinsight.model import CATEGORIES, CorrectionKind
from traceinsight.present import ColumnSpec
from traceinsight.report.document import ModeEntry

Format = Callable[[Any], str]

CATEGORY_MEANS_NOTE = ("The user's step: mean ms/step per category with its share, the profiler's own "
                       "cost taken out of the host-traced steps' split, so the categories add up to "
                       "the untraced median above, stalls in a few steps included (a trace captured "
                       "without traceinsight has no untraced timing: its traced split, as said below)")
TRACED_MEANS_NOTE = ("The traced step: mean ms/step per category of the host-traced steps with its "
                     "share, stalls in a few steps included. No untraced timing exists for a trace "
                     "captured without traceinsight: the profiler's own cost is inside these "
                     "figures, and they add up to the mean traced step, not to the median above")
CATEGORY_MEDIANS_NOTE = ("The typical step: median ms/step per category, corrected as the means are "
                         "(medians do not add up to a step).")
STEP_COLUMN = "step ms"


def drawn_basis(modes: Sequence[ModeEntry]) -> present.DrawnBasis:
    """``present.drawn_basis`` of the ok modes' entries."""
    return present.drawn_basis([(m.get("correction") or {}).get("kind") == CorrectionKind.TRACED.value
                                for m in modes if m["status"] == "ok"])


def category_means_note(modes: Sequence[ModeEntry]) -> str:
    """What the category means add up to, for these modes."""
    return TRACED_MEANS_NOTE if drawn_basis(modes) is present.DrawnBasis.TRACED else \
        CATEGORY_MEANS_NOTE


_ENV_LABELS = [("tensorflow", "TensorFlow"), ("keras", "Keras"), ("tf_keras", "tf_keras"),
               ("tf_keras_installed", "tf_keras installed"), ("python", "Python"),
               ("numpy", "NumPy"), ("os", "OS"), ("platform", "Platform"), ("machine", "Machine"),
               ("cpu", "CPU"), ("cpu_model", "CPU"), ("cores", "CPU cores"),
               ("cpu_cores", "CPU cores"), ("cpu_cores_usable", "CPU cores usable"),
               ("gpus", "GPU"), ("tf_built_with_cuda", "TF built with CUDA"), ("cuda", "CUDA"),
               ("cudnn", "cuDNN"), ("xprof", "xprof")]
# Left out of the markdown and HTML (they are pasted into public issues), kept in the JSON.
ENV_PRIVATE = ("hostname", "python_executable")
ENV_VAR_KEYS = ("env", "env_vars")


def env_items(env: dict) -> list[tuple[str, str, object]]:
    """(kind, label, value) rows of the environment table: kind "key" or "var" (an env variable)."""
    rows, seen = [], set(ENV_PRIVATE) | set(ENV_VAR_KEYS)
    for key, label in _ENV_LABELS:
        if key in env:
            rows.append(("key", label, env[key]))
            seen.add(key)
    rows += [("key", k, v) for k, v in env.items() if k not in seen]
    for key in ENV_VAR_KEYS:
        if isinstance(env.get(key), dict):
            if not env[key]:
                rows.append(("key", "Environment variables", "none of the relevant ones set"))
            rows += [("var", k, v) for k, v in env[key].items()]
    return rows


def env_value(v: Any, text: Format, code: Format) -> str:
    """An environment table cell in a writer's own escaping (``text`` for text, ``code`` for
    literal values): unset / yes / no / a list / JSON of a dict / the value."""
    import json
    if v is None:
        return "unset"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (list, tuple)):
        return text(", ".join(map(str, v))) if v else "none"
    if isinstance(v, dict):
        return code(json.dumps(v, sort_keys=True))
    return text(v)


def environment_rows(env: dict, text: Format, code: Format) -> list[list[str]]:
    """The environment table's rows (label, value) in a writer's own escaping."""
    return [[code(label) if kind == "var" else text(label),
             ("unset" if v is None else code(v)) if kind == "var" else env_value(v, text, code)]
            for kind, label, v in env_items(env)]


def timing_note(modes: Sequence[ModeEntry], name: Format) -> str:
    """What the modes table's median is: of the untraced steps, or of the host-traced ones for
    the modes (``name``: how a writer shows a mode's name) captured without untraced timing."""
    traced = [m["name"] for m in modes if m.get("timing_source") == "traced"]
    note = "Median ms/step of the untraced steps with its 95 % bootstrap interval."
    if traced and len(traced) == sum(1 for m in modes if m.get("timing_source")):
        return "Median ms/step of the host-traced steps (no untraced timing was captured) with its " \
               "95 % bootstrap interval."
    if traced:
        note += " Without untraced timing, from the host-traced steps: " + ", ".join(
            name(n) for n in traced) + "."
    return note


def correction_note(modes: Sequence[ModeEntry], name: Format) -> str:
    """How each mode's split was made from its traced one, and how large the correction was:
    the traced mean step, the untraced median, the method, the largest changes by category."""
    parts = []
    for m in modes:
        c = m.get("correction") if m["status"] == "ok" else None
        if not c or m.get("host_events_recorded") is False:
            continue
        who = name(m["name"])
        if c["kind"] == "traced":
            parts.append(f"{who}: {c['method']}")
            continue
        removed = sorted(((k, v) for k, v in (c.get("removed_ms") or {}).items()
                          if present.is_num(v) and abs(v) >= 0.0005), key=lambda kv: -abs(kv[1]))
        by_cat = ", ".join(f"{k} {'−' if v > 0 else '+'}{present.ms(abs(v))}" for k, v in removed)
        parts.append(f"{who}: traced mean step {present.ms(c['traced_mean_ms'])} ms → untraced median "
                     f"{present.ms(c['untraced_median_ms'])} ms; {c['method']}"
                     + (f"; drawn minus traced, ms/step: {by_cat}" if by_cat else ""))
    if not parts:
        return ""
    return "How this split was obtained, mode by mode: " + "; ".join(parts) + "."


def mean_share(mean: Any, share: Any) -> str:
    """``4.28 (42 %)``: a category's mean ms/step and its share of the traced time."""
    if not present.is_num(mean):
        return present.ms(mean)
    return present.ms(mean) + (f" ({present.percent(share)})" if present.is_num(share) and mean else "")


def concentrated_note(modes: Sequence[ModeEntry], name: Format) -> str:
    """Costs concentrated in a few steps that the analysis calls material (``stats.material``):
    the category, the steps it hit and its share of the time above the typical step (empty when
    none; the JSON lists every one)."""
    parts = []
    for m in modes:
        for cat, h in (m.get("concentrated") or {}).items() if m["status"] == "ok" else ():
            if not h.get("material"):
                continue
            steps = ", ".join(f"{s['step_num']} ({present.ms(s['ms'])} ms)" for s in h["steps"][:5])
            parts.append(f"{name(m['name'])} {cat} in {len(h['steps'])} of {h['n_steps']} "
                         f"steps: {steps}; {present.percent(h['share'])} of the traced time above "
                         f"its typical {present.ms(h['median_ms'])} ms")
    return ("In a few steps only: " + "; ".join(parts) + ".") if parts else ""


def distortion_note(modes: Sequence[ModeEntry], name: Format) -> str:
    """Which modes' category split to trust less: the profiler lengthened their traced steps by
    more than the threshold (empty when none)."""
    hit = [m for m in modes if m["status"] == "ok" and m.get("categories_distorted")]
    if not hit:
        return ""
    longer = [m for m in hit if (m.get("distortion") or 0) > 0]
    shorter = [m for m in hit if (m.get("distortion") or 0) < 0]

    def listed(ms: Sequence[ModeEntry]) -> str:
        return ", ".join(f"{name(m['name'])} ({present.percent(m.get('distortion'), signed=True)})"
                         for m in ms)
    parts = []
    if longer:
        parts.append("the profiler lengthened the traced steps of " + listed(longer)
                     + " by more than 15 %")
    if shorter:
        # the profiler only adds time: the untraced steps ran slower for another reason
        parts.append("the traced steps of " + listed(shorter) + " ran more than 15 % faster than "
                     "the untraced ones, which the profiler cannot do: the machine or the program "
                     "changed between them (the mode's notes say when the load did)")
    return ("Less certain: " + "; ".join(parts) + ". Its cost is taken out of the split above "
            "(how: below), but the shares of those modes rest on that correction more than on "
            "the trace.")


# ------------------------------------------------------------------------------- the mode tables

def measured(m: Mapping[str, Any]) -> bool:
    """A mode the modes table shows figures of (else the reason it has none)."""
    return m["status"] == "ok" and m.get("median_ms") is not None


def _figure(*keys: str) -> Callable[[Mapping[str, Any]], Any]:
    if len(keys) == 1:
        return lambda m: m.get(keys[0]) if measured(m) else None
    return lambda m: tuple(m.get(k) if measured(m) else None for k in keys)


def _standing(m: Mapping[str, Any]) -> str:
    """Where a mode stands against the fastest, or why the table has no figures of it."""
    if measured(m):
        return m.get("vs_fastest") or present.MISSING
    why = "no steps measured" if m["status"] == "ok" else present.safe(m["status"])
    return why + (f": {present.safe(m['error'])}" if m.get("error") else "")


MODE_COLUMNS = (
    ColumnSpec("name", "mode"),
    ColumnSpec("median_ms", "median ms/step", present.ms, get=_figure("median_ms")),
    ColumnSpec("ci", "95 % CI", lambda v: present.ms_range(*v), right=False,
               get=_figure("ci_lo_ms", "ci_hi_ms")),
    ColumnSpec("ratio", "ratio to fastest", lambda v: present.ratio_ci(*v), right=False,
               get=_figure("ratio", "ratio_lo", "ratio_hi", "ratio_note")),
    ColumnSpec("vs_fastest", "vs fastest", text=True, get=_standing),
    ColumnSpec("first_step_ms", "first step ms", present.ms, get=_figure("first_step_ms")),
    ColumnSpec("distortion", "profiler distortion", lambda v: present.percent(v, signed=True),
               get=_figure("distortion")),
    ColumnSpec("n", "steps", present.count, get=_figure("n")))

NOT_RECORDED = "not recorded"     # a trace that cannot split host time into categories


def _split(cell: Callable[[Mapping[str, Any], str], str], c: str) -> ColumnSpec:
    return ColumnSpec(c, c, str, get=lambda m: NOT_RECORDED if m.get("host_events_recorded") is False
                      else cell(m, c))


# the user's step: each category's mean ms/step with its share, then the step they add up to
CATEGORY_COLUMNS = (ColumnSpec("name", "mode"),
                    *(_split(lambda m, c: mean_share((m.get("category_means") or {}).get(c),
                                                     (m.get("category_shares") or {}).get(c)), c)
                      for c in CATEGORIES),
                    ColumnSpec("category_total_ms", STEP_COLUMN, present.ms))
# the typical step: each category's median ms/step (medians do not add up: no total)
MEDIAN_COLUMNS = (ColumnSpec("name", "mode"),
                  *(_split(lambda m, c: present.ms(m["categories"].get(c)), c) for c in CATEGORIES))

# GPU traces: per device (the slowest sets the step), median ms per steady step; the top kernels
DEVICE_COLUMNS = (ColumnSpec("host", "host"), ColumnSpec("device", "device"),
                  ColumnSpec("steps", "steps", present.count),
                  ColumnSpec("wall_ms", "step", present.ms),
                  ColumnSpec("compute_ms", "kernels", present.ms),
                  ColumnSpec("h2d_ms", "H2D", present.ms), ColumnSpec("d2h_ms", "D2H", present.ms),
                  ColumnSpec("d2d_ms", "D2D", present.ms), ColumnSpec("idle_ms", "idle", present.ms),
                  ColumnSpec("launch_ms", "host launch", present.ms),
                  ColumnSpec("span_ms", "device span", present.ms),
                  ColumnSpec("after_host_ms", "after host", present.ms),
                  ColumnSpec("slowest", "", text=True,
                             get=lambda d: "slowest" if d.get("slowest") else ""))
KERNEL_COLUMNS = (ColumnSpec("op", "framework op"), ColumnSpec("op_type", "type"),
                  ColumnSpec("kernel", "kernel"), ColumnSpec("calls", "calls", present.count),
                  ColumnSpec("device_ms", "device ms", present.ms),
                  ColumnSpec("ms_per_step", "ms/step", present.ms),
                  ColumnSpec("share", "share", present.percent))


# ------------------------------------------------------------------------------------------ hosts

HOSTS_INTRO = ("Each profile session with several hosts (a multi-worker job): median ms per steady "
               "step of each host, its ratio to the fastest host with a 95 % bootstrap interval; "
               "where steps line up, in how many steps each host was the slowest and its median "
               "wait for each step's slowest host. The hosts' clocks are not synchronised: steps "
               "are matched by step_num, never by time.")


def host_split_caption(session: Mapping[str, Any]) -> str:
    """The caption of a host session's category split table."""
    where = ("the device time of each host's slowest device"
             if session["category_kind"] == "device" else "median ms per steady step")
    return f"Category split per host ({where}):"
