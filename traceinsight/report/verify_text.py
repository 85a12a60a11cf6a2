"""What ``capture --verify`` recorded (run.json's ``verify``, copied into the report document): each
finding's claimed saving against the saving measured with its fix applied, in rows for markdown
and HTML. It computes nothing: the figures were measured by the run's own comparison when the
fix-applied modes were added (``traceinsight/capture/verify.py``)."""

from __future__ import annotations

from typing import Any, Callable

from traceinsight import present

Fmt = Callable[[Any], str]

# a saving is the mode's median step minus the fix-applied mode's (negative: the fix is slower);
# the ratio is the mode's over the fix-applied mode's
HEADER = ["Finding", "Mode", "Fix applied", "Claimed saving ms/step",
          "Measured saving ms/step [95 % CI]", "Mode ÷ fix applied [95 % CI]"]


def rows(v: dict, name: Fmt, text: Fmt) -> list[list[str]]:
    out = []
    for r in v.get("checked", []):
        claimed = (f"{present.ms(r['claimed_ms'])} ({r.get('claimed_kind') or 'no kind'})"
                   if r.get("claimed_ms") is not None else "none claimed")
        if r.get("status") == "measured":
            got = present.signed_ms(r.get("measured_ms"))
            if present.is_num(r.get("measured_lo")) and present.is_num(r.get("measured_hi")):
                got += (f" [{present.signed_ms(r['measured_lo'])}, "
                        f"{present.signed_ms(r['measured_hi'])}]")
            ratio = present.ratio_ci(r.get("ratio"), r.get("ratio_lo"), r.get("ratio_hi"))
        else:
            got, ratio = f"not measured: {r.get('why', '')}", ""
        out.append([text(r["rule"]), name(r["mode"]), fix_applied(r, name, text), text(claimed),
                    text(got), text(ratio)])
    return out


def fix_applied(r: dict, name: Fmt, text: Fmt) -> str:
    """The fix-applied mode, with the fix in its code's words where the row says it (a retracing
    fix); a fixed-signature mode with the traces its process counted (one: the signature held)."""
    out = name(r["fix_mode"])
    fix = r.get("fix")
    if not isinstance(fix, str) or not fix:
        return out
    traces = r.get("traces")
    held = (": traced once, the signature held" if traces == 1 else
            f": traced {traces} times, the signature did not hold" if isinstance(traces, int) else "")
    return out + text(" with ") + name(fix) + text(held)


def twice(v: dict, name: Fmt, text: Fmt) -> list[str]:
    """The findings --verify checked against more than one fix applied (run.json's
    ``several_fixes``), said once each: every row measures its own fix."""
    return [f"{text(s['rule'])} in {name(s['mode'])} is checked against {len(s['fix_modes'])} "
            f"fixes applied, one row each: {', '.join(name(f) for f in s['fix_modes'])}."
            for s in v.get("several_fixes") or [] if isinstance(s, dict)]


def notes(v: dict, name: Fmt, text: Fmt) -> list[str]:
    out = [text(f"Budget {present.ms(v.get('budget_s'))} s, spent {present.ms(v.get('spent_s'))} s "
                f"in {v.get('rounds', 0)} round(s); {v.get('note', '')}.")]
    out += twice(v, name, text)
    for r in v.get("left", []):
        out.append(f"Not verified: {text(r['rule'])} in {name(r['mode'])}: {text(r['why'])}.")
    if v.get("out_of_budget"):
        out.append("Out of the budget, not added: " + ", ".join(name(n) for n in v["out_of_budget"])
                   + ".")
    return out
