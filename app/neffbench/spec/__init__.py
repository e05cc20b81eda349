"""Compile specs: one description of every parameter, its validation, files and hash.

``CompileSpec``, ``ModelSpec``, ``RopeSpec``, ``InputsSpec``, ``ROPE_TYPES``, ``SECTIONS``,
``section_fields`` and ``top_fields`` are the RoPE kernel's, the one kernel there was before the
registry: a spec file without ``kernel`` is a RoPE spec, and code written against these names
keeps working. They are resolved on first use so that this package imports no kernel.
"""

from __future__ import annotations

from typing import Any

from neffbench.spec.compiler_args import compiler_args
from neffbench.spec.files import dumps_json, dumps_toml, from_dict, load, loads_json, loads_toml, save, spec_hash, to_dict
from neffbench.spec.problems import Problem, SpecError
from neffbench.spec.schema import (
    DTYPES,
    TARGETS,
    CompilerSpec,
    fields_of,
    is_active,
    kernel_of,
    sections_of,
    tables_of,
    top_fields_of,
)
from neffbench.spec.validate import errors, validate

_ROPE_NAMES = {"CompileSpec": "RopeCompileSpec", "ModelSpec": "ModelSpec", "RopeSpec": "RopeSpec",
               "InputsSpec": "InputsSpec", "ROPE_TYPES": "ROPE_TYPES", "SECTIONS": "SECTIONS"}

__all__ = [
    "DTYPES", "TARGETS", "CompilerSpec", "Problem", "SpecError", "compiler_args", "dumps_json", "dumps_toml",
    "errors", "fields_of", "from_dict", "is_active", "kernel_of", "load", "loads_json", "loads_toml", "save",
    "section_fields", "sections_of", "spec_hash", "tables_of", "to_dict", "top_fields", "top_fields_of",
    "validate", *_ROPE_NAMES,
]


def __getattr__(name: str) -> Any:
    if name in _ROPE_NAMES:
        from neffbench.kernels.rope import params

        return getattr(params, _ROPE_NAMES[name])
    raise AttributeError(f"module 'neffbench.spec' has no attribute {name!r}")


def section_fields(section: str, spec: Any = None) -> tuple:
    """Fields of a section of ``spec`` (default: the RoPE spec)."""
    return fields_of(spec if spec is not None else __getattr__("CompileSpec"), section)


def top_fields(spec: Any = None) -> tuple:
    """Top fields of ``spec`` (default: the RoPE spec)."""
    return top_fields_of(spec if spec is not None else __getattr__("CompileSpec"))
