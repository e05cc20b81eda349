"""What the module kernel adds to the ``neffbench`` command: ``FILE.py:NAME`` as SPEC, the options that set its
tables (``--input``, ``--kwarg``, ``--constant``, ``--bucket``) and ``neffbench resolve``."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from neffbench.kernels.cli_contribution import CliContribution
from neffbench.kernels.module import entry as entries
from neffbench.kernels.module.cli_values import cli_values, pairs
from neffbench.kernels.module.params import ModuleCompileSpec, ModuleSection
from neffbench.schema.problems import Problem, SpecError


class ModuleCli(CliContribution):
    source_help = "a module entry (FILE.py:NAME or package.module:NAME)"
    commands = {"resolve": "neffbench.kernels.module.resolve"}

    def spec_from_source(self, source: str) -> ModuleCompileSpec | None:
        """``FILE.py:NAME`` or ``package.module:NAME`` as SPEC: a module spec for that entry."""
        if ":" not in source or not entries.looks_like_entry(source):
            return None
        parsed = entries.parse(source)
        name = parsed.attr.split(".")[-1].replace("_", "-") or "module"
        return ModuleCompileSpec(name=name, module=ModuleSection(entry=source))

    def add_options(self, group: argparse._ArgumentGroup) -> None:
        group.add_argument(
            "--input",
            dest="module_inputs",
            action="append",
            metavar="NAME:SPEC",
            help="module kernel: a tensor input by forward-parameter name, e.g. "
            "--input 'x:f32[{tokens},4096]' (repeat for each)",
        )
        group.add_argument(
            "--kwarg",
            dest="module_kwargs",
            action="append",
            metavar="NAME=VALUE",
            help="module kernel: a factory/constructor argument (TOML value: 4096, 1e-6, true, [1, 2], a bare "
            'word such as gelu for a string, or a nested object: \'config={entry="transformers:GPT2Config", '
            "kwargs={n_embd=64}}'; malformed TOML is refused; a relative file in an entry is relative to this folder)",
        )
        group.add_argument(
            "--constant",
            dest="module_constants",
            action="append",
            metavar="NAME=VALUE",
            help="module kernel: a non-tensor forward argument bound by name (a TOML value, as for --kwarg)",
        )
        group.add_argument(
            "--bucket",
            dest="module_buckets",
            action="append",
            metavar="AXIS=V1,V2,...",
            help="module kernel: the values of a {axis}; one NEFF per combination",
        )

    def apply_options(self, spec: Any, args: argparse.Namespace) -> Any:
        given = [
            getattr(args, d, None) for d in ("module_inputs", "module_kwargs", "module_constants", "module_buckets")
        ]
        if not isinstance(spec, ModuleCompileSpec):
            if any(given):
                raise SpecError(
                    [
                        Problem(
                            "--input",
                            f"--input, --kwarg, --constant and --bucket are for module "
                            f"specs; this is a {spec.kernel} spec.",
                        )
                    ]
                )
            return spec
        inputs = {**spec.inputs, **pairs(given[0], "--input", ":")}
        kwargs = {**spec.module.kwargs, **cli_values(given[1], "--kwarg")}
        constants = {**spec.module.constants, **cli_values(given[2], "--constant")}
        buckets = dict(spec.buckets)
        for axis, values in pairs(given[3], "--bucket").items():
            try:
                buckets[axis] = tuple(int(v) for v in values.split(",") if v.strip())
            except ValueError:
                raise SpecError(
                    [
                        Problem(
                            "--bucket", f"--bucket {axis}={values}: values must be whole numbers separated by commas."
                        )
                    ]
                ) from None
        module = dataclasses.replace(spec.module, kwargs=kwargs, constants=constants)
        return dataclasses.replace(spec, inputs=inputs, buckets=buckets, module=module)
