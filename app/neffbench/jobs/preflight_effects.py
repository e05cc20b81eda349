"""Pre-flight's checks of what a forward does besides returning its outputs, which a trace silently changes: writes
into module state or into its inputs, buffers it replaces, random numbers it draws (read from the eager call the
check watches, ``neffbench.usercode.effects``). Each finding names the tensor and the user's file and line."""

from __future__ import annotations

from typing import Any

from neffbench.jobs.preflight import Report


def _listed(items: list[str], limit: int = 6) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def _at(where: str) -> str:
    return f" at {where}" if where else ""


def check_effects(report: Report, built: Any, effects: Any, remedy: Any) -> None:
    """What the eager call did besides returning (``effects``: usercode.effects.Effects), as pre-flight problems;
    ``remedy(names)``: the kernel's way of keeping written tensors as state (Kernel.state_remedy)."""
    lifted = set(built.input_names[len(built.input_names) - len(built.state) :]) if built.state else set()
    written = effects.state_writes()
    if len(written) == 1:
        (w,) = written
        report.error(
            f"the forward writes into the {w.kind} '{w.name}'{_at(w.where)} ({w.op}): a traced NEFF keeps no state "
            f"between calls, so on Neuron this {w.kind} is a constant holding its value when traced, which every "
            f"call starts from again whatever the calls before wrote; {remedy([w.name])}."
        )
    elif written:
        kinds = " and ".join(f"{k}s" for k in sorted({w.kind for w in written}))
        by_place: dict[str, list[str]] = {}
        for w in written:
            by_place.setdefault(f"{_at(w.where)} ({w.op})", []).append(w.name)
        places = "; ".join(f"{_listed(names, 4)}{place}" for place, names in by_place.items())
        report.error(
            f"the forward writes into {len(written)} {kinds} of the module ({places}): a traced NEFF keeps no "
            "state between calls, so on Neuron each is a constant holding its value when traced, which every call "
            f"starts from again whatever the calls before wrote; {remedy([w.name for w in written])}."
        )
    for write in effects.input_writes():
        if write.name in lifted:
            continue
        report.warning(
            f"the forward writes into its input '{write.name}'{_at(write.where)} ({write.op}): a NEFF does not write "
            "its inputs back, so on Neuron the caller never sees this write (neffbench keeps and saves the inputs "
            "as they were before any call)."
        )
    for name in effects.replaced:
        report.warning(
            f"the forward replaces the buffer '{name}' with another tensor: a traced NEFF keeps the value it had "
            "when traced, so one that depends on the inputs is fixed at trace time."
        )


def check_repeatable(report: Report, built: Any, outputs: tuple[Any, ...], effects: Any) -> None:
    """Two eager calls with the same inputs (the kernel's own while building, and the reference) must agree: a
    module whose answer is not a function of its inputs cannot be checked against anything."""
    import torch

    from neffbench.usercode.tensors import UnreadableTensor, dense

    first = built.eager_outputs
    if first is None:
        return
    differing = []
    for i, (a, b) in enumerate(zip(first, outputs)):
        try:  # a sparse or quantized output is compared by its values (one such output is an error already)
            a, b = dense(a), dense(b)
        except UnreadableTensor:
            continue
        if a.shape != b.shape or not torch.equal(a, b):
            name = built.output_names[i] if i < len(built.output_names) else f"output{i}"
            same_shape = a.shape == b.shape and a.dtype == b.dtype and a.numel()
            gap = f" by up to {float((a.double() - b.double()).abs().max()):.3g}" if same_shape else ""
            differing.append(f"'{name}'{gap}")
    if not differing:
        return
    draws = [f"{op}{_at(where)}" for op, where in effects.random]
    why = (
        f"it draws random numbers: {_listed(draws)}"
        if draws
        else "no random call was seen, so something else it reads changes between calls"
    )
    report.error(
        f"the module gives a different answer on every call: two eager calls with the same inputs differ in "
        f"{_listed(differing)}; {why}. Nothing can be checked against such a module: draw the randomness outside "
        "and pass it in as an input, or turn it off (dropout: training=False)."
    )
