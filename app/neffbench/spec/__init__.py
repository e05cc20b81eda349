"""Compile specs: one description of every parameter, its validation, files and hash."""

from neffbench.spec.compiler_args import compiler_args
from neffbench.spec.files import dumps_json, dumps_toml, from_dict, load, loads_json, loads_toml, save, spec_hash, to_dict
from neffbench.spec.problems import Problem, SpecError
from neffbench.spec.schema import (
    DTYPES,
    ROPE_TYPES,
    SECTIONS,
    TARGETS,
    CompilerSpec,
    CompileSpec,
    InputsSpec,
    ModelSpec,
    RopeSpec,
    is_active,
    section_fields,
    top_fields,
)
from neffbench.spec.validate import errors, validate

__all__ = [
    "DTYPES", "ROPE_TYPES", "SECTIONS", "TARGETS", "CompileSpec", "CompilerSpec", "InputsSpec", "ModelSpec",
    "Problem", "RopeSpec", "SpecError", "compiler_args", "dumps_json", "dumps_toml", "errors", "from_dict",
    "is_active", "load", "loads_json", "loads_toml", "save", "section_fields", "spec_hash", "to_dict",
    "top_fields", "validate",
]
