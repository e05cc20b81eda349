"""The toolkit below the kernels: field descriptions, problems and the compiler's options, shared by every kernel.

Kernels build their specs from these; spec documents (``neffbench.spec``) read, write, hash and
validate them above the kernels. Nothing here imports a kernel, torch or Qt.
"""

from neffbench.schema.compiler import TARGETS, CompilerSpec, compiler_args
from neffbench.schema.fields import (
    DTYPES,
    check_ranges,
    fields_of,
    hints_of,
    is_active,
    sections_of,
    tables_of,
    top_fields_of,
    ui,
)
from neffbench.schema.header import (
    SpecHeader,
    compiler_field,
    description_field,
    kernel_spec,
    name_field,
    workdir_field,
)
from neffbench.schema.problems import Problem, SpecError

__all__ = [
    "DTYPES",
    "TARGETS",
    "CompilerSpec",
    "Problem",
    "SpecError",
    "SpecHeader",
    "check_ranges",
    "compiler_args",
    "compiler_field",
    "description_field",
    "fields_of",
    "hints_of",
    "is_active",
    "kernel_spec",
    "name_field",
    "sections_of",
    "tables_of",
    "top_fields_of",
    "ui",
    "workdir_field",
]
