"""A run's later calls (``neffbench run --steps N [--prefill JOB]``): a module with state called again and again, its
state carried from each call to the next, against the job's eager module carried the same way.

The artifact either holds its state itself (a TorchScript from torch_neuronx.trace keeps it on the device, so it
takes the inputs alone) or is given it (cpu-check's traced graph and the eager module take the state after the
inputs and return it after the outputs). Runs in the run child.
"""

from __future__ import annotations

from typing import Any

from neffbench.runs import arrays
from neffbench.runs.arrays import split, tensors
from neffbench.runs.runtimes import REGISTRY, Runtime
from neffbench.workers.run_io import RunFailure, default_tolerance


def _roles(feeds: arrays.Arrays, keys: list[str]) -> tuple[str, ...]:
    return tuple(feeds.roles.get(k, k) for k in keys)


def carried(
    run: Any,
    session: Any,
    runtime: type[Runtime],
    feeds: arrays.Arrays,
    first_outputs: dict[str, Any],
    prefill: Any = None,
) -> list[dict[str, Any]]:
    """The calls after the first (whose outputs are ``first_outputs``), or after a prefill job's call: each one's
    comparison. ``run``: the run child (its request, its job's module rebuilt, its output)."""
    from neffbench.backends.verify import as_tuple, carry, compare
    from neffbench.kernels import registry
    from neffbench.spec import from_dict

    req = run.req
    steps = int(req.get("steps") or 1)
    if runtime.feeds_neff_by_name:
        raise RunFailure(
            f"--steps calls the job's TorchScript or its module again and again; {runtime.name} feeds the NEFF by "
            "the names it was compiled with, and which of them hold the state is not documented: use --runtime "
            + " or ".join(name for name, cls in REGISTRY.items() if not cls.feeds_neff_by_name)
        )
    spec = from_dict(req["spec"])
    eager = run.rebuilt()
    kernel = registry.for_spec(spec)
    user_keys, state_keys = split(feeds)
    keeps_state = runtime.keeps_state_on_device
    ref = arrays.load(req["reference"])
    names = _roles(ref, list(ref.arrays))
    given = req.get("tolerance")
    atol, rtol, _ = given if given else default_tolerance(ref)
    tolerance = (float(atol), float(rtol))
    n = len(state_keys)
    input_names = _roles(feeds, user_keys)
    user = tensors(feeds, user_keys)
    state = tensors(feeds, state_keys)
    import torch

    results: list[dict[str, Any]] = []
    with torch.no_grad():
        if prefill is not None:
            if keeps_state:
                raise RunFailure(
                    "--prefill carries another job's state into this one, but torch_neuronx.trace's module keeps "
                    "its state on the device, where another traced module cannot reach it: use --runtime "
                    + " or ".join(
                        name
                        for name, cls in REGISTRY.items()
                        if not (cls.feeds_neff_by_name or cls.keeps_state_on_device)
                    )
                )
            p_feeds = arrays.load(prefill["inputs"])
            p_user_keys, p_state_keys = split(p_feeds)
            p_user, p_state = tensors(p_feeds, p_user_keys), tensors(p_feeds, p_state_keys)
            p_call = run.artifact_of(prefill)
            got, expected = as_tuple(p_call(*p_user, *p_state)), as_tuple(eager(*p_user, *p_state))
            results.append({"step": "prefill", **compare(got, expected, *tolerance, names)})
            consumed = {name: t.numel() for name, t in zip(_roles(p_feeds, p_user_keys), p_user)}
            first, own_state, state = 1, got[len(got) - n :], expected[len(expected) - n :]
            user = kernel.step_inputs(spec, 1, consumed)
            count = steps
        else:
            # The first call has been compared already; its eager twin gives the state the next call starts from.
            expected = as_tuple(eager(*user, *state))
            got = tuple(arrays.to_tensor(first_outputs[k], ref.dtypes[k]) for k in ref.arrays)
            consumed = {name: t.numel() for name, t in zip(input_names, user)}
            first, own_state, state = 1, got[len(got) - n :], expected[len(expected) - n :]
            user = kernel.step_inputs(spec, 1, consumed)
            count = steps - 1
        results += carry(
            session.module,
            eager,
            spec,
            user,
            state,
            names=names,
            input_names=input_names,
            steps=count,
            keeps_state=keeps_state,
            tolerance=tolerance,
            first=first,
            consumed=consumed,
            artifact_state=own_state,
        )
    return results
