"""The generated wrapper that gets traced: tensors in by name, constants bound, a flat tuple of tensors out.

It is Python source, so the very same text is executed in the worker and written into
``reproduce.py``: what the script rebuilds is what the job traced.

With state (``[module] state``: buffers the forward writes, such as a KV cache) the wrapper takes each state
tensor after the inputs and returns its new value after the outputs: the state is lifted out of the module, so
the traced graph is a function of what it is given, as a NEFF is. ``kept()`` turns it back into a module that
keeps its state inside, for the toolchains that hold state on the device.
"""

from __future__ import annotations

from typing import Any

from neffbench.kernels.module.outputs import Path, access, name_of

CLASS_NAME = "NeffbenchWrapper"

# Pasted into the source when there is state. The state tensors are swapped into the module's own slots for the
# call (torch.func.functional_call refuses to run under torch.jit.trace), so the forward's in-place writes land
# in the tensors passed, which are then returned.
_STATE_HELPERS = '''
import contextlib
import copy


@contextlib.contextmanager
def neffbench_state(inner, names, values):
    """For the block, each named parameter or buffer of ``inner`` is the tensor given in its place."""
    slots = []
    for name, value in zip(names, values):
        owner_name, _, attr = name.rpartition(".")
        owner = inner.get_submodule(owner_name)
        table = owner._buffers if attr in owner._buffers else owner._parameters
        if table[attr] is not value:
            slots.append((table, attr, table[attr]))
            table[attr] = value
    try:
        yield
    finally:
        for table, attr, saved in reversed(slots):
            table[attr] = saved


class NeffbenchKept(torch.nn.Module):
    """The wrapper with its state kept inside (a copy of it, as parameters or buffers), taking the inputs
    alone and returning the outputs and the new state, as a device that holds the state runs it."""

    def __init__(self, wrapper, parameters):
        super().__init__()
        self.wrapper = copy.deepcopy(wrapper)
        for name in wrapper.STATE:
            owner_name, _, attr = name.rpartition(".")
            owner = self.wrapper.inner.get_submodule(owner_name)
            value = getattr(owner, attr).detach().clone()
            owner._buffers.pop(attr, None)
            owner._parameters.pop(attr, None)
            if parameters:
                owner.register_parameter(attr, torch.nn.Parameter(value, requires_grad=False))
            else:
                owner.register_buffer(attr, value)

    def state(self):
        inner = self.wrapper.inner
        return [inner.get_parameter(n) if self.parameters else inner.get_buffer(n) for n in self.wrapper.STATE]

    @property
    def parameters(self):
        first = self.wrapper.STATE[0].rpartition(".")
        return first[2] in self.wrapper.inner.get_submodule(first[0])._parameters

    def aliases(self):
        """torch_neuronx.trace's input_output_aliases: each state tensor and the output that updates it."""
        return {tensor: self.wrapper.OUTPUTS + i for i, tensor in enumerate(self.state())}

    def forward(self, *inputs):
        return self.wrapper(*inputs, *self.state())
'''


def state_argument(i: int) -> str:
    return f"state_{i}"


def source(
    inputs: list[str],
    positional_only: set[str],
    constants: dict[str, Any],
    leaves: list[Path],
    label: str,
    state: tuple[str, ...] = (),
) -> str:
    """The wrapper class's source. ``inputs`` are the forward parameters that take tensors, in order; ``state``
    the names of the parameters and buffers lifted out as state."""
    args = [name for name in inputs if name in positional_only]
    args += [f"{name}={name}" for name in inputs if name not in positional_only]
    args += [f"{name}={value!r}" for name, value in constants.items()]
    lifted = [state_argument(i) for i in range(len(state))]
    returns = ", ".join([access(path) for path in leaves] + lifted)
    names = ", ".join(name_of(path) for path in leaves)
    call = f"self.inner({', '.join(args)})"
    if state:
        body = f"""        with neffbench_state(self.inner, self.STATE, ({", ".join(lifted)},)):
            out = {call}"""
        doc = f"{label} with tensors in by name, then its state; out a flat tuple: {names}, then the new state."
    else:
        body = f"        out = {call}"
        doc = f"{label} with tensors in by name and a flat tuple of tensors out: {names}."
    declared = f"    STATE = {tuple(state)!r}\n    OUTPUTS = {len(leaves)}\n\n" if state else ""
    methods = (
        "\n    def kept(self, parameters=True):\n"
        '        """The same wrapper keeping its state inside (parameters: for input_output_aliases)."""\n'
        "        return NeffbenchKept(self, parameters)\n"
        "\n    def initial_state(self):\n"
        '        """The state as the module holds it before any call (copies): what the first call is given."""\n'
        "        inner = dict(self.inner.named_buffers()) | dict(self.inner.named_parameters())\n"
        "        return tuple(inner[name].detach().clone() for name in self.STATE)\n"
        if state
        else ""
    )
    return f'''{_STATE_HELPERS if state else ""}
class {CLASS_NAME}(torch.nn.Module):
    """{doc}"""

{declared}    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self{"".join(", " + n for n in [*inputs, *lifted])}):
{body}
        return ({returns},)
{methods}'''.lstrip("\n")


def make(src: str, inner: Any) -> Any:
    """Execute the wrapper's source and wrap ``inner`` with it."""
    import torch

    namespace: dict[str, Any] = {"torch": torch}
    exec(compile(src, f"<{CLASS_NAME}>", "exec"), namespace)  # noqa: S102 - our own generated source
    return namespace[CLASS_NAME](inner)
