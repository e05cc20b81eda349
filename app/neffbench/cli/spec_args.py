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

from neffbench.kernels import registry
from neffbench.presets import resolve_spec_source
from neffbench.schema.compiler import split_extra_args
from neffbench.spec import Problem, SpecError, anchored_here, fields_of, hints_of, sections_of, top_fields_of
from neffbench.words import plural

_PLACEHOLDER = {int: "N", float: "X", str: "TEXT"}
_SPEC_DEST = "spec:"


def _shell_words(text: str) -> tuple[str, ...]:
    try:
        return split_extra_args(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"cannot split {text!r}: {exc}") from None


def _option_name(name: str) -> str:
    return "--" + name.replace("_", "-")


def _add_field_option(
    group: argparse._ArgumentGroup, option: str, tp: typing.Any, choices: list[str] | None, help_text: str
) -> None:
    dest = _SPEC_DEST + option
    origin = typing.get_origin(tp)
    inner = next((a for a in typing.get_args(tp) if a is not type(None)), tp) if origin is not tuple else tp
    help_text = help_text.replace("%", "%%")
    if inner is bool:
        group.add_argument(option, dest=dest, action=argparse.BooleanOptionalAction, default=None, help=help_text)
    elif typing.get_origin(inner) is tuple and typing.get_args(inner)[0] is str:
        # One shell-quoted string: argparse would take "--verbose" in a list for an option of its own.
        group.add_argument(
            option,
            dest=dest,
            type=_shell_words,
            default=None,
            metavar="'ARGS'",
            help=help_text + " Quote them as one argument, e.g. --extra-args='--verbose info'.",
        )
    elif typing.get_origin(inner) is tuple:
        item = typing.get_args(inner)[0]
        group.add_argument(
            option, dest=dest, nargs="+", type=item, default=None, metavar=_PLACEHOLDER.get(item, "V"), help=help_text
        )
    else:
        group.add_argument(
            option,
            dest=dest,
            type=inner,
            default=None,
            choices=choices,
            metavar=None if choices else _PLACEHOLDER.get(inner, "V"),
            help=help_text,
        )


def _kernel_fields(kernel: typing.Any) -> typing.Iterator[tuple[str, dataclasses.Field, typing.Any]]:
    """(key, field, type) for every top and section field of a kernel's spec."""
    cls = kernel.spec_class
    hints = hints_of(cls)
    for f in top_fields_of(cls):
        yield f.name, f, hints[f.name]
    for section, sect_cls in sections_of(cls).items():
        sect_hints = hints_of(sect_cls)
        for f in fields_of(cls, section):
            yield f"{section}.{f.name}", f, sect_hints[f.name]


def per_kernel_help(helps: list[tuple[str, str]]) -> str:
    """An option's help from each kernel that has the field: its text when they all say the same, else each
    kernel's own, named (``rope: Dtype of query and key. module: Cast the module's ...``): the option sets the
    field of the spec's kernel, so no kernel's words may stand for another's (``[rope] Dtype of query and key.
    [module] Cast the module's ...``)."""
    texts: dict[str, list[str]] = {}
    for kernel, text in helps:
        texts.setdefault(text, []).append(kernel)
    if len(texts) == 1:
        return next(iter(texts))
    return "Per kernel: " + " ".join(f"[{', '.join(kernels)}] {text}" for text, kernels in texts.items())


def add_spec_arguments(parser: argparse.ArgumentParser, *, required: bool = True) -> None:
    """SPEC (a .toml/.json file, a preset name, or what a kernel accepts, such as FILE.py:NAME) and
    ``--<field>`` overrides for every field of every kernel's spec.

    Kernels share an option when they have a field of that name (``--num-tokens``, ``--target``);
    the override applies to the field of the loaded spec's kernel.
    """
    sources = [kernel.cli.source_help for kernel in registry.available() if kernel.cli.source_help]
    parser.add_argument(
        "spec",
        metavar="SPEC",
        nargs=None if required else "?",
        help="spec file (.toml or .json), the name of a bundled preset" + "".join(f", or {s}" for s in sources),
    )
    options: dict[str, list[tuple[str, str]]] = {}  # option -> [(kernel, key)]
    pending: dict[str, tuple[str, typing.Any, list[str]]] = {}
    helps: dict[str, list[tuple[str, str]]] = {}  # option -> [(kernel, its help)]
    order: list[str] = []
    for kernel in registry.available():
        for key, f, tp in _kernel_fields(kernel):
            if typing.get_origin(tp) is dict:
                continue  # a table (module inputs, kwargs, buckets): its kernel's own repeatable options set it
            option = _option_name(f.name)
            options.setdefault(option, []).append((kernel.name, key))
            helps.setdefault(option, []).append((kernel.name, f.metadata["help"]))
            choices = list(f.metadata["choices"] or ())
            if option not in pending:
                group = "spec" if "." not in key else f"[{key.split('.')[0]}]"
                pending[option] = (group, tp, choices)
                order.append(option)
            else:
                merged = pending[option][2]
                merged += [c for c in choices if c not in merged]
    groups: dict[str, argparse._ArgumentGroup] = {}
    for option in order:
        group, tp, choices = pending[option]
        if group not in groups:
            groups[group] = parser.add_argument_group(f"{group} overrides")
        _add_field_option(groups[group], option, tp, choices or None, per_kernel_help(helps[option]))
    extra = parser.add_argument_group("kernel options")
    for kernel in registry.available():
        kernel.cli.add_options(extra)
    parser.set_defaults(_spec_options=options)


def spec_from_args(args: argparse.Namespace) -> typing.Any:
    """The spec named by SPEC with the command line's overrides applied (not yet validated)."""
    spec = resolve_spec_source(args.spec)
    kernel = registry.for_spec(spec)
    options: dict[str, list[tuple[str, str]]] = getattr(args, "_spec_options", {})
    top: dict[str, typing.Any] = {}
    sections: dict[str, dict[str, typing.Any]] = {}
    problems: list[Problem] = []
    for dest, value in vars(args).items():
        if not dest.startswith(_SPEC_DEST) or value is None:
            continue
        option = dest[len(_SPEC_DEST) :]
        keys = [key for name, key in options.get(option, []) if name == kernel.name]
        if not keys:
            problems.append(Problem(option, f"{option} does not apply to a {kernel.name} spec."))
            continue
        key = keys[0]
        value = tuple(value) if isinstance(value, list) else value
        if "." in key:
            section, name = key.split(".", 1)
            sections.setdefault(section, {})[name] = value
        else:
            top[key] = value
    if problems:
        raise SpecError(problems)
    replaced = {s: dataclasses.replace(getattr(spec, s), **v) for s, v in sections.items()}
    spec = dataclasses.replace(spec, **top, **replaced)
    # A spec file's own paths are absolute already (relative to its folder); what was typed here is relative to
    # this folder. Resolved once, so that check's probe, the job's worker and later runs read the same files.
    return anchored_here(kernel.cli.apply_options(spec, args))


def print_problems(problems: list[Problem], *, file: typing.TextIO) -> None:
    for p in problems:
        print(str(p), file=file)


def read_spec(args: argparse.Namespace, *, refusal: str) -> typing.Any:
    """The spec SPEC and the overrides name, unvalidated; None, with why printed to stderr, when it
    cannot be read (the caller exits 2). ``refusal`` ends the closing line, saying what was not done."""
    try:
        return spec_from_args(args)
    except SpecError as exc:
        print_problems(exc.problems + _the_other_problems(args.spec, exc.problems), file=sys.stderr)
        print(f"{args.spec}: the spec cannot be read; {refusal}.", file=sys.stderr)
        return None


def _the_other_problems(source: str, found: list[Problem]) -> list[Problem]:
    """Validation's problems of a spec file whose other values are unreadable (checked with the defaults of those,
    whose fields it leaves out): every problem of the file at once, not only the first kind."""
    from neffbench.spec import load_partial, validate

    if not Path(source).is_file():
        return []
    try:
        spec, held = load_partial(source)
    except SpecError:
        return []
    blamed = {p.field for p in [*found, *held]}
    return [p for p in validate(spec) if p.field not in blamed]


def checked_spec(args: argparse.Namespace, *, refusal: str) -> typing.Any:
    """The spec SPEC and the overrides name, with its warnings and errors printed to stderr.

    None when it cannot be used (the caller exits 2); ``refusal`` ends the closing line, saying
    what was not done.
    """
    from neffbench.spec import validate

    spec = read_spec(args, refusal=refusal)
    if spec is None:
        return None
    problems = validate(spec)
    print_problems(problems, file=sys.stderr)
    n_errors = sum(p.severity == "error" for p in problems)
    if n_errors:
        print(f"{args.spec}: {plural(n_errors, 'error')}; {refusal}.", file=sys.stderr)
        return None
    return spec
