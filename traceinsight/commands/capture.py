"""``traceinsight capture``: run a workload in every execution mode, time it, trace it."""

from __future__ import annotations

import math
import shlex
import time
from pathlib import Path

from traceinsight.errors import TraceinsightError


class Command:
    """Run a workload (model.py) in every execution mode, time it, and trace it.

    Each mode runs in its own process: the first step (tracing / compilation) is timed apart inside
    a host trace (host tracer level 3), then warm-up, an untraced timing phase (per-step
    perf_counter times), then a python-tracer pass (level 1). A first step longer than the host trace
    is captured again in a fresh process with a longer trace. With several modes, the untraced
    timing comes in --rounds interleaved rounds (A B C A B C ...). Results go to
    runs/<UTC time>-<workload>/ (run.json; per mode: timings.json and TensorBoard-layout traces).

    examples:
      traceinsight capture samples/tf2_vs_tf1_small.py
      traceinsight capture model.py --modes eager,function,xla
      traceinsight capture --resume runs/20261121T120000Z-model
      traceinsight capture --list-modes
      traceinsight capture --remote host1:6009,host2:6009 --duration-ms 2000
    """

    def prepare_parser(self, parser) -> None:
        parser.add_argument("workload", nargs="?", help="the workload file (model.py)")
        parser.add_argument("--modes", help="comma-separated modes (default: the file's MODES, "
                                            "else every mode that applies)")
        parser.add_argument("--list-modes", action="store_true", help="list the modes and exit")
        parser.add_argument("--out", default="runs", help="runs directory (default: ./runs)")
        parser.add_argument("--name", help="run folder name (default: <UTC time>-<workload name>)")
        parser.add_argument("--resume", metavar="RUN",
                            help="complete a run: capture only its modes that are missing or failed")
        from traceinsight.capture.compat import SUPPORTED_RANGE  # the standard library only
        parser.add_argument("--python", metavar="PATH",
                            help="run the workload under this interpreter (an environment with your "
                                 f"TensorFlow {SUPPORTED_RANGE}; it needs nothing of traceinsight's own "
                                 "dependencies). Default: this traceinsight's Python")
        parser.add_argument("--remote", metavar="HOST:PORT[,...]",
                            help="trace a running job's TF profiler servers instead (one mode per "
                                 "worker; see traceinsight.capture.remote); needs --duration-ms")
        parser.add_argument("--duration-ms", type=int, help="--remote: trace length in ms")
        d = _defaults()
        settings = parser.add_argument_group(
            "capture settings", "defaults below; a workload file's CAPTURE = {...} (keys named like the "
            "flags: host_trace_ms, ...) changes them for that file; a flag given here wins. "
            "--resume reuses the run's own settings.")
        settings.add_argument("--timeout", type=float,
                              help=f"seconds per mode before it is killed and recorded failed ({d.timeout:g})")
        settings.add_argument("--min-steps", type=int,
                              help=f"untraced timing: at least this many steps ({d.min_steps})")
        settings.add_argument("--min-time", type=float,
                              help=f"untraced timing: and at least this many seconds ({d.min_time:g})")
        settings.add_argument("--max-time", type=float,
                              help=f"untraced timing: stop after this many seconds once 3 steps are done "
                                   f"({d.max_time:g})")
        settings.add_argument("--warmup", "--warmup-steps", type=int, dest="warmup_steps",
                              help=f"untimed warm-up steps ({d.warmup_steps})")
        settings.add_argument("--host-trace-ms", type=int,
                              help=f"host-traced pass length; it holds the first step ({d.host_trace_ms})")
        settings.add_argument("--host-max-steps", type=int,
                              help=f"at most this many steps in the host-traced pass ({d.host_max_steps})")
        settings.add_argument("--python-trace-ms", type=int,
                              help=f"python-traced pass length ({d.python_trace_ms})")
        settings.add_argument("--python-max-steps", type=int,
                              help=f"at most this many steps in the python-traced pass ({d.python_max_steps})")
        settings.add_argument("--rounds", type=int,
                              help=f"untraced timing rounds per mode, interleaved across modes (A B C A B C "
                                   f"...): the modes' processes stay alive after their capture and time "
                                   f"another round each in turn; 1 = no interleaving ({d.rounds})")
        settings.add_argument("--round-time", type=float,
                              help=f"rounds after the first: at least this many seconds ({d.round_time:g})")
        settings.add_argument("--round-min-steps", type=int,
                              help=f"rounds after the first: at least this many steps ({d.round_min_steps})")
        settings.add_argument("--no-python-tracer", action="store_const", const=False, dest="python_tracer",
                              help="skip the python-tracer pass")
        parser.add_argument("--verify", action="store_true",
                            help="after the capture, add the mode with each finding's fix applied "
                                 "where the fix is a mode (tf.function, tensors, XLA, "
                                 "predict_on_batch; a retraced function step: reduce_retracing and "
                                 "the input_signature the finding quotes) and the modes that split "
                                 "the factor table's "
                                 "gaps, and report each claimed saving against the measured one; "
                                 "again until nothing is left or the budget is spent")
        parser.add_argument("--verify-budget", type=float, default=600.0, metavar="SECONDS",
                            help="--verify: stop adding modes after this many seconds (600)")
        parser.set_defaults(_capture_parser=parser)  # run() gets the top-level parser

    def run(self, args, parser) -> int:
        from rich.console import Console

        from traceinsight.capture import environment, planning, reserve

        console = Console(highlight=False)
        if args.remote:
            from traceinsight.capture import remote
            return remote.run_command(args)
        if args.list_modes:
            print_modes(console)
            return 0
        environment.set_workload_python(getattr(args, "python", None))
        overrides = {k: getattr(args, k, None) for k in planning.Options().as_dict()}
        requested = [m.strip() for m in args.modes.split(",") if m.strip()] if args.modes else None
        command = _command_line(args, getattr(args, "_capture_parser", parser))
        console.print(machine_line())
        notes: list[str] = []
        started = time.monotonic()
        if args.resume:
            run_path = Path(args.resume)
            if not (run_path / "run.json").is_file():
                raise TraceinsightError(f"{run_path}: not a run folder (no run.json)")
            plan, writer, notes = planning.resume_run(run_path, requested, overrides, command,
                                                  args.workload, say=_say(console))
        else:
            if not args.workload:
                raise TraceinsightError("give a workload file (model.py), --resume RUN or --list-modes")
            console.print(f"checking {args.workload} ...")
            plan, writer = planning.new_run(args.workload, requested, Path(args.out), args.name,
                                             overrides, command)
            notes += plan.notes
        try:
            for n in notes:
                console.print(f"[yellow]note:[/] {n}")
            console.print(f"run: [bold]{plan.run_path}[/]  ({plan.workload.kind} workload "
                          f"{plan.workload.name}, {len(plan.modes)} mode(s) to capture)")
            try:
                states = run_with_progress(console, plan, writer, plan.opts)
            except KeyboardInterrupt:
                # what was captured is kept (the modes done, the interrupted one marked): say how
                # to finish the run rather than start it again
                console.print(f"interrupted: the modes captured are kept; finish the run with\n"
                              f"  traceinsight capture --resume {shlex.quote(str(plan.run_path))}",
                              markup=False, highlight=False, soft_wrap=True)
                raise
            wall = time.monotonic() - started
            writer.manifest.setdefault("capture_wall_s", []).append(round(wall, 1))
            reserve.save_manifest(writer)   # with the space set aside, on a disk that filled
            print_summary(console, plan.run_path)
            tf_notes = list(dict.fromkeys(n for s in states for n in s.tf_notes))
            for s in states:
                for n in s.notes:
                    if n not in s.tf_notes:
                        console.print(f"[yellow]warning:[/] {s.name}: {n}")
            for n in tf_notes:   # the TensorFlow's, not a mode's: once per capture
                console.print(f"[yellow]warning:[/] {n}")
            console.print(f"captured in {wall:.0f} s")
            console.print(f"next: traceinsight view {plan.run_path}")
            failed = [s for s in states if s.status != "ok"]
            if failed:
                console.print(f"[red]{len(failed)} of {len(states)} mode(s) failed:[/] "
                              f"{', '.join(s.name for s in failed)}")
        finally:
            plan.release()
        if getattr(args, "verify", False):
            verify_run(console, plan.run_path, float(args.verify_budget), overrides, command)
        return 1 if failed else 0


def verify_run(console, run_path: Path, budget_s: float, overrides: dict, command: str) -> None:
    """``--verify``: add the fix-applied modes (``capture/verify.py``) round by round within the
    budget, then record claimed against measured in run.json and print it."""
    from traceinsight import runfolder
    from traceinsight.analysis.load import load
    from traceinsight.capture import planning, reserve, verify

    started = time.monotonic()
    manifest = runfolder.read_manifest(run_path)
    walls = manifest.get("capture_wall_s") or [60.0]
    per_mode = max(5.0, float(walls[0]) / max(1, len(manifest.get("modes") or {})))
    tried: set[str] = set()
    checks: list = []
    left: list[dict] = []
    out_of_budget: list[str] = []
    rounds = 0
    while True:
        run = load(run_path)
        found, left = verify.plan(run, frozenset(tried))
        todo = verify.modes_to_add(found)
        if not todo:
            break
        fit = int((budget_s - (time.monotonic() - started)) // per_mode)
        if fit < 1:
            out_of_budget = todo
            break
        batch, out_of_budget = todo[:fit], todo[fit:]
        console.print(f"verify: adding {', '.join(batch)} (the fixes applied)")
        tried.update(batch)
        checks += [c for c in found if c.fix_mode in batch]
        try:
            sigs = {c.fix_mode: (c.mode, data) for c in found
                    if c.fix_mode in batch and (data := c.signature_data()) is not None}
            plan, writer, notes = planning.resume_run(run_path, batch, overrides, command, None,
                                                      say=_say(console), signatures=sigs)
        except reserve.DiskFull:            # no room for the run's last word: stop, saying so
            raise
        except TraceinsightError as e:      # a mode this workload cannot run: said, not fatal
            left += [{"rule": c.rule, "mode": c.mode, "why": str(e)} for c in found
                     if c.fix_mode in batch]
            checks = [c for c in checks if c.fix_mode not in batch]
            continue
        try:
            run_with_progress(console, plan, writer, plan.opts)
            reserve.save_manifest(writer)
        finally:
            plan.release()
        rounds += 1
        if out_of_budget:
            break
    run = load(run_path)
    rows = verify.measured(run, checks)
    manifest = runfolder.read_manifest(run_path)
    verify.record(manifest, budget_s, time.monotonic() - started, rounds, rows, left, out_of_budget)
    planning.RunWriter(Path(run_path), manifest).save()
    print_verified(console, manifest["verify"])


def print_verified(console, v: dict) -> None:
    from rich.text import Text

    from traceinsight import present
    from traceinsight.report import verify_text as vt
    rows = []
    for r in v["checked"]:
        claimed = (f"{present.ms(r['claimed_ms'])} ({r['claimed_kind']})"
                   if r.get("claimed_ms") is not None else "")
        got = (f"{present.signed_ms(r['measured_ms'])} "
               f"{present.ratio_ci(r['ratio'], r['ratio_lo'], r['ratio_hi'])}"
               if r["status"] == "measured" else r.get("why", ""))
        fix = vt.fix_applied(r, present.safe, present.safe)
        rows.append([Text(present.safe(r["rule"])), Text(present.safe(r["mode"])),
                     Text(fix), claimed, Text(present.safe(got))])
    if rows:
        present.print_table(console, present.rich_table(
            "verify: claimed saving against the fix applied (ms/step)",
            [("finding", False), ("mode", False), ("fix applied", False), ("claimed saving", True),
             ("measured saving, mode ÷ fix [95% CI]", True)], rows))
    for line in vt.twice(v, present.safe, present.safe):
        console.print(Text(line, style="dim"))
    for r in v["left"]:
        console.print(Text(f"not verified: {r['rule']} in {present.safe(r['mode'])}: "
                           f"{present.safe(r['why'], None)}", style="yellow"))
    if v["out_of_budget"]:
        console.print(Text("out of the verify budget: " + ", ".join(v["out_of_budget"]),
                           style="yellow"))


def machine_line(seconds: float = 0.5) -> str:
    """The capture's first line: how busy the machine is before any workload runs (other
    processes' share of the CPUs over ``seconds``, the load average), flagged when busy enough to
    disturb a round (``machineload.disturbed``), when timings will say more about the machine
    than about the code."""
    from traceinsight.capture import machine
    from traceinsight.machineload import DISTURBED_OTHER_CPU, disturbed, percent

    m = machine.sample(seconds)
    cpus = m.get("cpu_usable") or m.get("cpu_count")
    load = m.get("loadavg")
    figure = (f"other processes took {percent(m.get('other_cpu_busy'))} of the "
              f"{cpus or '?'} CPUs"
              + (f" ({percent(m['steal'])} stolen by the hypervisor)" if m.get("steal") else "")
              + (f", load average {load[0]:.1f}" if load else ""))
    if disturbed(m.get("other_cpu_busy")):
        return (f"[yellow]the machine is busy:[/] {figure}. Steps timed now are slower than on a "
                f"quiet machine; a round during which others take {percent(DISTURBED_OTHER_CPU)} "
                "of the CPUs or more is timed again, or set aside, and every page says so")
    return f"[dim]machine: {figure}[/]"


def _say(console):
    """A line printed before a resumed run's workload runs (its path and sha256), escaped."""
    from rich.markup import escape

    from traceinsight.present import safe
    return lambda line: console.print(f"[yellow]note:[/] {escape(safe(line, None))}")


def _defaults():
    from traceinsight.capture.planning import Options
    return Options()


def _command_line(args, parser) -> str:
    """The command as the user could retype it: the workload plus every flag that is not a default."""
    words = ["traceinsight", "capture"] + ([args.workload] if args.workload else [])
    for action in parser._actions:
        if not action.option_strings or action.dest in ("help", "list_modes", "version"):
            continue
        value = getattr(args, action.dest, None)
        if value is None or value == action.default:
            continue
        flag = action.option_strings[-1]
        words += [flag] if action.nargs == 0 else [flag, str(value)]
    return " ".join(shlex.quote(w) for w in words)


def print_modes(console) -> None:
    """The modes in a few lines: base modes, then the variants (+tensor, tf_keras:, tf1:)."""
    from rich.table import Table

    from traceinsight.capture import modes as modes_mod

    tk = modes_mod.tf_keras_installed()
    keras_base = [m for m in modes_mod.keras_modes() if not m.tensor_inputs and not m.legacy_keras]
    tf1 = [m for m in modes_mod.keras_modes() if m.tf1]
    for title, items in (("Keras workloads (model() + data())", keras_base),
                         ("Function workloads (step() + inputs())", modes_mod.function_modes())):
        table = Table(title=title, title_justify="left", box=None, pad_edge=False, show_header=False)
        table.add_column("mode", style="bold", no_wrap=True)
        table.add_column("what one step is")
        for m in items:
            table.add_row(m.name, m.help + (" (needs y)" if m.needs_y else ""))
        console.print(table)
    installed = "" if tk else f" (tf_keras is not installed: {modes_mod.TF_KERAS_INSTALL})"
    console.print(f"Keras variants: [bold]<mode>{modes_mod.TENSOR_SUFFIX}[/] converts the inputs to "
                  "tensors once, outside the step; [bold]tf_keras:<mode>[/] runs it under Keras 2"
                  f"{installed}; TF1 graph (Keras 2, eager disabled, Session): "
                  + ", ".join(f"[bold]{m.name}[/]" for m in tf1) + ".")


def median_detail(summary: dict) -> str:
    """The progress line's figure of a finished mode, formatted as the summary table formats it."""
    from traceinsight import present
    return f"{present.ms(summary['median_ms'])} ms/step"


def run_with_progress(console, plan, writer, opts) -> list:
    from rich.live import Live
    from rich.table import Table

    from traceinsight.capture import orchestrate as orch
    from traceinsight.capture import reserve
    from traceinsight.capture.children import read_phase

    states = {m: orch.ModeState(m) for m in plan.modes}
    current: list[str | None] = [None]
    rounds_note: list[str | None] = [None]

    def render():
        t = Table(box=None, pad_edge=False)
        t.add_column("mode", no_wrap=True)
        t.add_column("status")
        t.add_column("elapsed", justify="right")
        t.add_column("")
        for name, s in states.items():
            style = {"ok": "green", "failed": "red", "running": "cyan"}.get(s.status, "dim")
            el = f"{s.elapsed:.1f} s" if s.elapsed is not None else ""
            detail = ""
            if s.status == "ok" and (writer.mode(name).get("summary") or {}).get("median_ms") is not None:
                detail = median_detail(writer.mode(name)["summary"])
            elif s.status in ("failed", "not run"):
                detail = (s.error or "")[:80]
            elif s.status == "running":
                detail = read_phase(writer.path / writer.mode(name)["dir"]) or "starting"
            t.add_row(name, f"[{style}]{s.status}[/]", el, detail)
        if rounds_note[0]:
            t.add_row("", "[cyan]timing[/]", "", rounds_note[0])
        return t

    keep_alive = orch.rounds_fit(opts, len(plan.modes))
    stopped: reserve.DiskFull | None = None
    with Live(render(), console=console, refresh_per_second=4, transient=False) as live:
        def poll():
            live.update(render())

        try:
            for name in plan.modes:
                st = states[name]
                st.status, st.started = "running", time.monotonic()
                current[0] = name
                live.update(render())
                done = orch.capture_mode(plan, writer, name, opts, poll=poll, keep_alive=keep_alive)
                done.started = st.started
                states[name] = done
                live.update(render())
            if keep_alive:
                def on_round(name, i):
                    rounds_note[0] = f"round {i + 1} of {opts.rounds}: {name}"
                orch.run_rounds(writer, list(states.values()), opts, poll=poll, on_round=on_round)
                rounds_note[0] = None
                live.update(render())
        except BaseException as e:  # Ctrl-C: no workload process may stay behind
            for st in states.values():
                if st.live is not None:
                    st.live.kill()
                    st.live = None
            if not isinstance(e, reserve.DiskFull):
                raise
            # the disk is full: the mode being captured fails, the rest are not run, saying so
            stopped = orch.end_on_full_disk(plan, writer, e)
            for name, st in states.items():
                entry = writer.mode(name)
                if entry.get("status") == "failed" and st.status == "running":
                    st.status, st.error, st.ended = "failed", entry.get("error"), time.monotonic()
                elif entry.get("status") == "pending":
                    st.status, st.error = "not run", entry.get("error")
            live.update(render())
    console.print()
    if stopped is not None:    # (after the table, on a line of its own)
        raise stopped
    return list(states.values())


def build_timing_run(run_path: Path):
    """The run's modes with their untraced timings (no traces needed for the summary table), read
    by the loader the analysis uses (``analysis.load.load_timings``: statuses, rounds, machine
    load, kinds), so its ratios are the ones ``report`` and ``view`` show."""
    from traceinsight.analysis.load import load_timings
    return load_timings(Path(run_path))


def print_summary(console, run_path: Path) -> None:
    from rich.text import Text

    from traceinsight import present
    from traceinsight.stats import RATIO_METHOD

    run = build_timing_run(run_path)
    rows = []
    failed = []
    for r in run.table("summary").records():
        med = r["median_ms"]
        name = Text(present.safe(r["mode"]))
        if r["status"] != "ok" or med is None or (isinstance(med, float) and math.isnan(med)):
            failed.append((r["mode"], r["status"], r["error"]))
            rows.append([name, Text(str(r["status"]), style="red"), "", "", "", "", ""])
            continue
        rows.append([name, present.ms(med), present.ms_range(r["p25_ms"], r["p75_ms"]),
                     present.integer(r["n"]), present.ratio_ci(r["ratio"], r["ratio_lo"], r["ratio_hi"]),
                     present.ms(r["first_step_ms"]), present.percent(r["distortion"], signed=True)])
    columns = [("mode", False), ("median", True), ("IQR", True), ("n", True),
               ("× fastest [95% CI]", True), ("1st step", True), ("distortion", True)]
    # the mode names fold into what the figures leave of the console, but never into slivers
    figures = sum(max([len(h)] + [len(str(r[i])) for r in rows]) for i, (h, numeric) in enumerate(columns)
                  if numeric)
    name_min = max(6, min(24, console.width - figures - 3 * len(columns)))
    present.print_table(console, present.rich_table(
        f"{run.name}: ms per step, untraced (perf_counter)", columns, rows, name_min=name_min))
    console.print(Text("median / IQR / 1st step in ms; " + RATIO_METHOD + " Distortion: host-traced "
                       "median / untraced median − 1.", style="dim"))
    for mode, status, error in failed:
        console.print(Text(f"{present.safe(mode)}: {status}: {present.safe(error or '')}", style="red"))
    from traceinsight.analysis.timings import load_notes
    for m in run.modes.values():   # rounds re-run, set aside or kept on a busy machine
        for note in load_notes(m.timing) if m.timing is not None else ():
            console.print(Text(f"{present.safe(m.name)}: {note}", style="yellow"))
