"""The generated wrapper that gets traced: tensors in by name, constants bound, a flat tuple of tensors out.

It is Python source, so the very same text is executed in the worker and written into
``reproduce.py``: what the script rebuilds is what the job traced.
"""

from __future__ import annotations

from typing import Any

from neffbench.kernels.module.outputs import Path, access, name_of

CLASS_NAME = "NeffbenchWrapper"


def source(
    inputs: list[str], positional_only: set[str], constants: dict[str, Any], leaves: list[Path], label: str
) -> str:
    """The wrapper class's source. ``inputs`` are the forward parameters that take tensors, in order."""
    args = [name for name in inputs if name in positional_only]
    args += [f"{name}={name}" for name in inputs if name not in positional_only]
    args += [f"{name}={value!r}" for name, value in constants.items()]
    returns = ", ".join(access(path) for path in leaves)
    names = ", ".join(name_of(path) for path in leaves)
    return f'''class {CLASS_NAME}(torch.nn.Module):
    """{label} with tensors in by name and a flat tuple of tensors out: {names}."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self{"".join(", " + n for n in inputs)}):
        out = self.inner({", ".join(args)})
        return ({returns},)
'''


def make(src: str, inner: Any) -> Any:
    """Execute the wrapper's source and wrap ``inner`` with it."""
    import torch

    namespace: dict[str, Any] = {"torch": torch}
    exec(compile(src, f"<{CLASS_NAME}>", "exec"), namespace)  # noqa: S102 - our own generated source
    return namespace[CLASS_NAME](inner)
