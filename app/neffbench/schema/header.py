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
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from neffbench.schema.compiler import CompilerSpec
from neffbench.schema.fields import ui

_T = TypeVar("_T")

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform

    @dataclass(frozen=True, kw_only=True)
    class SpecHeader:
        """What ``kernel_spec`` adds to a spec, as a type checker sees it: a base to declare a spec class on."""

        kernel: ClassVar[str]
        name: str = ""
        description: str = ""
        workdir: str = ""
        compiler: CompilerSpec = field(default_factory=CompilerSpec)

else:
    # At run time the decorator adds these fields itself, in the order the files keep; a real base would
    # put them first (and get_type_hints would read them twice).
    SpecHeader = object

    def dataclass_transform(**_: object) -> Callable[[_T], _T]:
        """Only type checkers read PEP 681's marker; Python 3.10's typing has none, and this needs no backport."""
        return lambda decorator: decorator


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


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def kernel_spec(kernel: str, *, name: str | None = None) -> Callable[[type[_T]], type[_T]]:
    """Decorate a class of a kernel's own spec fields: the frozen spec dataclass of ``kernel`` (``name``: the
    default job name, else the kernel's)."""

    def make(cls: type[_T]) -> type[_T]:
        own = dict(cls.__dict__.get("__annotations__", {}))
        reserved = {"kernel", "name", "description", "workdir", "compiler"} & set(own)
        if reserved:
            raise TypeError(f"{cls.__name__} declares {', '.join(sorted(reserved))}: kernel_spec adds those")
        cls.__annotations__ = {"name": str, "description": str, "workdir": str, **own, "compiler": CompilerSpec}
        added = {
            "name": name_field(name or kernel),
            "description": description_field(),
            "workdir": workdir_field(),
            "compiler": compiler_field(),
            # A class attribute, not a field: files write it as ``kernel = "..."`` from the class.
            "kernel": kernel,
        }
        for attr, value in added.items():
            setattr(cls, attr, value)
        return dataclass(frozen=True)(cls)

    return make
