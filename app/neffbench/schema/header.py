"""What every kernel's spec has besides its own sections: the job fields first, ``[compiler]`` last.

``kernel_spec("name")`` makes a class of a kernel's own fields a spec: a frozen dataclass whose fields
are ``name``, ``description`` and ``workdir``, then the class's own (sections, tables, top fields) in
the order it declares them, then ``compiler``. That order is the order of spec files, forms and
``--help``; a dataclass cannot inherit fields that way (inherited ones come first, redefined ones keep
their place), so the decorator writes the annotations before ``dataclass`` reads them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from neffbench.schema.compiler import CompilerSpec
from neffbench.schema.fields import ui


def name_field(default: str) -> Any:
    return field(
        default=default, metadata=ui("Name", "Names the job directories (letters, digits, '-', '_', '.').", neff=False)
    )


def description_field() -> Any:
    return field(
        default="", metadata=ui("Description", "Free text; presets name their sources here.", neff=False, advanced=True)
    )


def workdir_field() -> Any:
    return field(
        default="neffbench-workdir",
        metadata=ui("Workdir", "Directory that receives one job directory per compile.", neff=False),
    )


def compiler_field() -> Any:
    return field(default_factory=CompilerSpec)


def kernel_spec(kernel: str, *, name: str | None = None) -> Callable[[type], type]:
    """Decorate a class of a kernel's own spec fields: the frozen spec dataclass of ``kernel`` (``name``: the
    default job name, else the kernel's)."""

    def make(cls: type) -> type:
        own = dict(cls.__dict__.get("__annotations__", {}))
        reserved = {"kernel", "name", "description", "workdir", "compiler"} & set(own)
        if reserved:
            raise TypeError(f"{cls.__name__} declares {', '.join(sorted(reserved))}: kernel_spec adds those")
        cls.__annotations__ = {"name": str, "description": str, "workdir": str, **own, "compiler": CompilerSpec}
        cls.name = name_field(name or kernel)
        cls.description = description_field()
        cls.workdir = workdir_field()
        cls.compiler = compiler_field()
        # A class attribute, not a field: files write it as ``kernel = "..."`` from the class.
        cls.kernel = kernel
        return dataclass(frozen=True)(cls)

    return make
