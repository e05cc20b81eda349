"""``neffbench resolve ENTRY``: what a module entry is (its kind, factory and forward signatures), found in a
probe child because finding it runs the user's code; the probe's side is :func:`report`. The module kernel brings
both (``CliContribution.commands`` and ``Kernel.probe_requests``), as a plugin would."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from neffbench.kernels.module import entry as entries
from neffbench.kernels.module.cli_values import cli_values
from neffbench.kernels.module.kwargs_check import check as check_kwargs
from neffbench.schema.problems import SpecError


def register(sub: argparse._SubParsersAction) -> None:
    rp = sub.add_parser(
        "resolve",
        help="what a module entry is: its kind and its factory and forward signatures",
        description="Resolve ENTRY ('package.module:attr' or 'path/to/file.py:attr') in a child "
        "process and show what it found, as the window's Resolve does.",
    )
    rp.add_argument("entry", metavar="ENTRY")
    rp.add_argument("--kwarg", action="append", metavar="NAME=VALUE", help="factory argument (to see what it builds)")
    rp.add_argument("--call", choices=("auto", "factory", "object"), default="auto")
    rp.add_argument("--path", action="append", default=[], metavar="DIR", help="folder to put on sys.path first")
    rp.add_argument("--json", action="store_true")
    rp.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from neffbench.probe.client import ProbeError, ask

    try:
        kwargs = cli_values(args.kwarg, "--kwarg")
    except SpecError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    request = {
        "entry": entries.anchored(args.entry, Path.cwd()),
        "kwargs": entries.anchored_values(kwargs, Path.cwd()),
        "call": args.call,
        "path": [str(Path(p).resolve()) for p in args.path],
    }
    try:
        found = ask("resolve", request)
    except ProbeError as exc:
        print(f"{args.entry}: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(found, indent=2))
        return 0 if found.get("ok") else 1
    if not found.get("ok"):
        print(f"{args.entry}: {found.get('error')}", file=sys.stderr)
        return 1
    sep = ":" if str(found["module"]).endswith(".py") else "."
    print(f"{args.entry}: {found['kind']} {found['module']}{sep}{found['qualname']}")
    if found.get("doc"):
        print(f"  {found['doc'].splitlines()[0]}")
    if found.get("factory_text"):
        print(f"  factory: {found['qualname']}{found['factory_text']}")
    if found.get("built"):
        print(f"  builds: {found['built']}")
    if found.get("forward_text"):
        print(f"  forward{found['forward_text']}")
    if found.get("forward_note"):
        print(f"  forward: unknown ({found['forward_note']})")
    return 0


def report(request: dict[str, Any]) -> dict[str, Any]:
    """The probe's answer to a ``resolve`` request (it runs the user's code, so only in a probe child)."""
    import inspect
    from pathlib import Path

    from neffbench.kernels.module.build import build_value
    from neffbench.kernels.module.signature import describe_params, format_params, forward_of, kind_of
    from neffbench.usercode.errors import message

    text = request["entry"]
    paths = tuple(request.get("path") or ())
    kwargs = request.get("kwargs") or {}
    try:
        obj = entries.resolve(text, paths)
    except entries.EntryError as exc:
        return {"ok": False, "error": str(exc)}
    kind = kind_of(obj)
    module = getattr(obj, "__module__", None) if kind != "instance" else type(obj).__module__
    parsed = entries.parse(text)
    if parsed.is_file and str(module).startswith(entries.USER_PREFIX):
        module = Path(parsed.target).name
    # Its own docstring only: an undocumented module would otherwise show nn.Module's.
    own_doc = (obj.__dict__.get("__doc__") if kind == "class" else getattr(obj, "__doc__", None)) or ""
    out: dict[str, Any] = {
        "ok": True,
        "entry": text,
        "kind": kind,
        "qualname": getattr(obj, "__qualname__", type(obj).__qualname__),
        "module": module,
        "doc": inspect.cleandoc(own_doc).split("\n\n")[0][:400] if own_doc else "",
        "factory": None,
        "forward": None,
        "forward_note": None,
    }
    if kind == "class":
        out["factory"] = describe_params(obj.__init__, skip_self=True)
        forward = getattr(obj, "forward", None)
        if forward is not None:
            out["forward"] = describe_params(forward, skip_self=True)
    elif kind == "function":
        params = describe_params(obj)
        out["function"] = params
        # A function may be the forward itself or a factory; building it shows which.
        takes_tensors = any(p["widget"] == "tensor" for p in params)
        if request.get("call") == "object" or (request.get("call") != "factory" and takes_tensors):
            out["forward"] = params
        else:
            out["factory"] = params
            try:
                made = obj(**{k: build_value(v, paths, f"kwargs.{k}") for k, v in kwargs.items()})
                out["forward"] = describe_params(forward_of(made), skip_self=True)
                out["built"] = type(made).__qualname__
            except Exception as exc:  # noqa: BLE001 - the user's factory may raise anything
                out["forward_note"] = (
                    f"calling {text}(**kwargs) to see its forward raised {type(exc).__name__}: {message(exc)}"
                )
    else:
        out["forward"] = describe_params(forward_of(obj), skip_self=True)
    for key in ("factory", "forward", "function"):
        if out.get(key) is not None:
            out[f"{key}_text"] = format_params(out[key])
    # Keys a callable would silently ignore (a misspelt config field), for the kwargs they were given.
    callee = obj if out.get("factory") is not None and request.get("call") != "object" else None
    out["kwargs_checked"] = kwargs
    out["kwargs_problems"] = [
        {"severity": sev, "field": f, "message": m} for sev, f, m in kwargs_problems(callee, kwargs, paths)
    ]
    return out


def kwargs_problems(
    obj: Any, kwargs: dict[str, Any], paths: tuple[str, ...], where: str = "module.kwargs"
) -> list[tuple[str, str, str]]:
    """(severity, field, sentence) for every key of ``kwargs`` (and of the nested tables with an ``entry``) that
    its callable would not honour: what the form shows after a Resolve. Resolves nested entries (runs user
    code); the values are the raw ones of the spec (a nested table stays a table)."""
    out: list[tuple[str, str, str]] = []
    if obj is not None:
        found = check_kwargs(obj, {k: _plain_value(v, paths) for k, v in kwargs.items()})
        out += [("error", where, m) for m in found.errors] + [("warning", where, m) for m in found.warnings]
    for name, value in kwargs.items():
        if not (isinstance(value, dict) and "entry" in value) or value.get("call", "factory") == "object":
            continue
        try:
            nested = entries.resolve(str(value["entry"]), paths)
        except entries.EntryError as exc:
            out.append(("error", f"{where}.{name}", str(exc)))
            continue
        out += kwargs_problems(nested, value.get("kwargs") or {}, paths, f"{where}.{name}.kwargs")
    return out


def _plain_value(value: Any, paths: tuple[str, ...]) -> Any:
    """A nested table's object made, so that a trial construction gets what the real one will."""
    if isinstance(value, dict) and "entry" in value:
        from neffbench.kernels.module.build import build_value

        try:
            return build_value(value, paths, "")
        except Exception:  # noqa: BLE001 - reported where it is built
            return None
    return value
