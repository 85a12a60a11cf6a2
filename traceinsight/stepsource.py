"""Which rule found a mode's steps, as data (``traceinsight.analysis.steps`` lists the rules).

Decisions read this (whether step numbers are the job's own, whether the steps are device groups
or a device module's executions); the rule's sentence (``ModeResult.step_rule``) is only shown.
It sits below ``model`` so that ``ModeResult`` can carry it without importing the analysis.
"""

from __future__ import annotations

from enum import Enum


class StepSource(str, Enum):
    # host step markers carrying their own step_num (the job's step numbers)
    MARKERS_STEP_NUM = "markers_step_num"
    # host step markers that repeat a step_num: renumbered in time order (this trace's numbers)
    MARKERS_RENUMBERED = "markers_renumbered"
    TF_FUNCTION_CALLS = "tf_function_calls"   # each top-level tf.function call on the main thread
    JIT_CALLS = "jit_calls"                   # each top-level call of one jitted function (JAX)
    DEVICE_STEPS_LINE = "device_steps_line"   # the 'Steps' line XProf wrote on each device
    DEVICE_GROUPS = "device_groups"           # device events grouped by their group_id stat
    MODULE_RUNS = "module_runs"               # the executions of the device's main XLA module
    DEVICE_ALL = "device_all"                 # all device activity as one step
    WHOLE_TRACE = "whole_trace"               # the whole main-thread span as one step
    NONE = "none"                             # no steps found
    UNKNOWN = "unknown"                       # not analysed (a failed or missing mode)

    @property
    def numbered_by_step_num(self) -> bool:
        """Whether the steps carry the job's own step numbers (markers' step_num, none repeated).
        Every other source numbers steps per trace (tf.function calls in order, XProf's group ids,
        0 for one window): the same number on two hosts need not be the same step."""
        return self is StepSource.MARKERS_STEP_NUM


class StepSpan(str, Enum):
    """What one step of a script's mode (``run``, ``profile()``, the Keras callback) spans, as
    timings.json records it (``step_span``): decided from the kinds of step the agent marked."""
    # the loop's iteration: from one step call's start (a tf.function, a Keras per-call method, a
    # --step-function) to the next step call's start, the loop's input fetch and body between
    # calls included
    ITERATION = "iteration"
    BATCH = "batch"         # a Keras fit batch: the batch's begin to its end
    MARKED = "marked"       # hand-marked (``p.step()``): from one mark to the next (or the with's end)
    MIXED = "mixed"         # more than one of these in one mode

    @staticmethod
    def of_kinds(kinds) -> StepSpan | None:
        """The span of the step kinds the agent counted (its ``step_kinds`` keys); None for none."""
        spans = {StepSpan.BATCH if k == "fit batch" else StepSpan.MARKED if k == "marked step"
                 else StepSpan.ITERATION for k in kinds}
        return spans.pop() if len(spans) == 1 else StepSpan.MIXED if spans else None
