"""Spec arguments for subcommands: a spec file or preset name, plus one override option per spec field.

The options are generated from the spec dataclasses' metadata, so a new field reaches the CLI
without touching this file.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import typing
from pathlib import Path

from neffbench.spec import SECTIONS, CompileSpec, Problem, SpecError, load, section_fields, top_fields
from neffbench.spec.schema import CompileSpec as _CompileSpec
from neffbench.spec.validate import split_extra_args

_PLACEHOLDER = {int: "N", float: "X", str: "TEXT"}


def _shell_words(text: str) -> tuple[str, ...]:
    try:
        return split_extra_args(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"cannot split {text!r}: {exc}") from None


def _option_name(name: str) -> str:
    return "--" + name.replace("_", "-")


def _add_field_option(group: argparse._ArgumentGroup, dest: str, f: dataclasses.Field, tp: typing.Any) -> None:
    meta = f.metadata
    origin = typing.get_origin(tp)
    inner = next((a for a in typing.get_args(tp) if a is not type(None)), tp) if origin is not tuple else tp
    help_text = meta["help"].replace("%", "%%")
    if inner is bool:
        group.add_argument(_option_name(f.name), dest=dest, action=argparse.BooleanOptionalAction, default=None,
                           help=help_text)
    elif typing.get_origin(inner) is tuple and typing.get_args(inner)[0] is str:
        # One shell-quoted string: argparse would take "--verbose" in a list for an option of its own.
        group.add_argument(_option_name(f.name), dest=dest, type=_shell_words, default=None, metavar="'ARGS'",
                           help=help_text + " Quote them as one argument, e.g. --extra-args='--verbose info'.")
    elif typing.get_origin(inner) is tuple:
        item = typing.get_args(inner)[0]
        group.add_argument(_option_name(f.name), dest=dest, nargs="+", type=item, default=None,
                           metavar=_PLACEHOLDER.get(item, "V"), help=help_text)
    else:
        group.add_argument(_option_name(f.name), dest=dest, type=inner, default=None,
                           choices=meta["choices"], metavar=None if meta["choices"] else _PLACEHOLDER.get(inner, "V"),
                           help=help_text)


def add_spec_arguments(parser: argparse.ArgumentParser, *, required: bool = True) -> None:
    """SPEC (a .toml/.json file, or a preset name) and ``--<field>`` overrides for every spec field."""
    parser.add_argument("spec", metavar="SPEC", nargs=None if required else "?",
                        help="spec file (.toml or .json), or the name of a bundled preset")
    hints = typing.get_type_hints(_CompileSpec)
    top = parser.add_argument_group("spec overrides")
    for f in top_fields():
        _add_field_option(top, f"spec:{f.name}", f, hints[f.name])
    for section, cls in SECTIONS.items():
        group = parser.add_argument_group(f"[{section}] overrides")
        sect_hints = typing.get_type_hints(cls)
        for f in section_fields(section):
            _add_field_option(group, f"spec:{section}.{f.name}", f, sect_hints[f.name])


def resolve_spec_source(source: str) -> CompileSpec:
    """Load SPEC: an existing file wins; otherwise a preset of that name; otherwise a clear error."""
    path = Path(source)
    if path.exists() or path.suffix.lower() in (".toml", ".json") or "/" in source:
        return load(path)
    from neffbench.presets import load_preset

    try:
        return load_preset(source)
    except KeyError as exc:
        raise SpecError([Problem("", f"'{source}' is neither a spec file nor a preset. {exc.args[0]}")]) from None


def spec_from_args(args: argparse.Namespace) -> CompileSpec:
    """The spec named by SPEC with the command line's overrides applied (not yet validated)."""
    spec = resolve_spec_source(args.spec)
    top: dict[str, typing.Any] = {}
    sections: dict[str, dict[str, typing.Any]] = {s: {} for s in SECTIONS}
    for dest, value in vars(args).items():
        if not dest.startswith("spec:") or value is None:
            continue
        key = dest[len("spec:"):]
        if "." in key:
            section, name = key.split(".", 1)
            sections[section][name] = tuple(value) if isinstance(value, list) else value
        else:
            top[key] = value
    replaced = {s: dataclasses.replace(getattr(spec, s), **v) for s, v in sections.items() if v}
    return dataclasses.replace(spec, **top, **replaced)


def print_problems(problems: list[Problem], *, file: typing.TextIO) -> None:
    for p in problems:
        print(str(p), file=file)


def checked_spec(args: argparse.Namespace, *, refusal: str) -> CompileSpec | None:
    """The spec SPEC and the overrides name, with its warnings and errors printed to stderr.

    None when it cannot be used (the caller exits 2); ``refusal`` ends the closing line, saying
    what was not done.
    """
    from neffbench.spec import validate

    try:
        spec = spec_from_args(args)
    except SpecError as exc:
        print_problems(exc.problems, file=sys.stderr)
        print(f"{args.spec}: the spec cannot be read; {refusal}.", file=sys.stderr)
        return None
    problems = validate(spec)
    print_problems(problems, file=sys.stderr)
    n_errors = sum(p.severity == "error" for p in problems)
    if n_errors:
        print(f"{args.spec}: {n_errors} error(s); {refusal}.", file=sys.stderr)
        return None
    return spec
