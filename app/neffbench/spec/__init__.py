"""Spec documents: read, write, hash and validate a kernel's spec, dispatching to the kernel it names.

The fields themselves (their descriptions, problems, the compiler's options) are ``neffbench.schema``,
below the kernels; this package sits above them.
"""

from __future__ import annotations

from neffbench.schema import (
    DTYPES,
    TARGETS,
    CompilerSpec,
    Problem,
    SpecError,
    compiler_args,
    fields_of,
    hints_of,
    is_active,
    sections_of,
    tables_of,
    top_fields_of,
)
from neffbench.spec.files import (
    anchored,
    anchored_here,
    dumps_json,
    dumps_toml,
    from_dict,
    kernel_of,
    load,
    load_partial,
    loads_json,
    loads_toml,
    save,
    to_dict,
)
from neffbench.spec.hashing import spec_hash
from neffbench.spec.validate import errors, validate

__all__ = [
    "DTYPES",
    "TARGETS",
    "CompilerSpec",
    "Problem",
    "SpecError",
    "anchored",
    "anchored_here",
    "compiler_args",
    "dumps_json",
    "dumps_toml",
    "errors",
    "fields_of",
    "hints_of",
    "from_dict",
    "is_active",
    "kernel_of",
    "load",
    "load_partial",
    "loads_json",
    "loads_toml",
    "save",
    "sections_of",
    "spec_hash",
    "tables_of",
    "to_dict",
    "top_fields_of",
    "validate",
]
