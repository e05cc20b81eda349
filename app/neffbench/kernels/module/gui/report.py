"""Reading the probe's resolve report for the module form: the worker's call, the summary, signature text."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from neffbench.gui.widgets import theme

NOT_RESOLVED = (
    "Not resolved yet. Resolve reads the entry's signature in a separate process: the window never imports your code."
)


def resolve_entry(token: int, request: dict[str, Any], typed: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """Worker thread: the window's warm probe child resolves the entry; failures come back as reports too.

    ``request`` has the paths made absolute; the report names the entry and arguments as ``typed`` in the form, so
    that the form can tell whether they changed since. The warm probe answers one request at a time, so a
    superseded Resolve still finishes first; the form ignores its result. Its torch (and transformers) imports are
    paid once per window."""
    from neffbench.probe.client import ProbeError, shared

    try:
        report = shared().ask("resolve", request)
    except (ProbeError, OSError) as exc:
        report = {"ok": False, "error": str(exc)}
    report["entry"] = typed["entry"]
    if "kwargs_checked" in report:
        report["kwargs_checked"] = typed["kwargs_checked"]
    return token, report


def trial_build(token: int, key: str, request: dict[str, Any]) -> tuple[int, str, dict[str, Any]]:
    """Worker thread: the warm probe builds the module and calls it once on the example inputs (``trial``).

    A probe that cannot answer gives no verdict (``ok``): the compile's own checks still run."""
    from neffbench.probe.client import ProbeError, shared

    try:
        result = shared().ask("trial", request)
    except (ProbeError, OSError):
        result = {"ok": True}
    return token, key, result


def trial_problem(result: dict[str, Any]) -> tuple[str, str]:
    """(field, sentence) of a failed trial: under the constructor's arguments when making the module failed, under
    the inputs when calling it on them did; a sentence that names its field (``inputs.x: ...``) goes there."""
    error = str(result.get("error") or "")
    named, sep, rest = error.partition(": ")
    if sep and named.startswith(("module.kwargs", "inputs.", "module.constants.")) and " " not in named:
        return named, rest[:1].upper() + rest[1:]
    if result.get("step"):
        bucket = ", ".join(f"{axis}={size}" for axis, size in (result.get("bucket") or {}).items())
        where = f" of the first bucket ({bucket})" if bucket else ""
        return "inputs", f"Called on these example inputs{where}, the module fails: {error}."
    return "module.kwargs", f"Made with these arguments, the module fails: {error}."


def entry_choices(path: str) -> dict[str, Any]:
    """Worker thread: ``{"names": [{"name", "kind", "line", "doc"}], "error": None, "top": NAME, "modules": [NAME,
    ...]}``: the names are usercode.defines.top_level_names's; ``error`` is the sentence saying why nothing can be
    listed; ``modules`` the module classes among the names and ``top`` the one no other uses (what to preselect)."""
    import ast

    from neffbench.kernels.module.file_modules import module_classes, top_module
    from neffbench.usercode.defines import SourceUnreadable, top_level_names

    try:
        names = top_level_names(path)
        tree = ast.parse(Path(path).read_text(encoding="utf-8"), filename=path)
    except SourceUnreadable as exc:
        return {"names": [], "error": str(exc), "top": None, "modules": []}
    except (OSError, SyntaxError, ValueError):  # changed since it was read a moment ago: no preselection
        tree = ast.Module(body=[], type_ignores=[])
    error = None if names else f"{Path(path).name} defines no public class, function or object to compile."
    listed = {n["name"] for n in names}
    modules = [node for node in module_classes(tree) if node.name in listed]
    return {"names": names, "error": error, "top": top_module(modules), "modules": [node.name for node in modules]}


def signature_text(p: dict[str, Any]) -> str:
    text = p["name"] + (f": {p['annotation']}" if p.get("annotation") else "")
    return text + (f" = {p['default']!r}" if p.get("has_default") else "")


def summary_lines(report: dict[str, Any]) -> list[str]:
    """Kind, qualified name, first doc line, and the factory and forward signatures, as rich-text lines."""
    e = html.escape
    kind, qualname = report.get("kind", "?"), report.get("qualname", "?")
    module = report.get("module")
    where = (
        f"{module}:{qualname}"
        if module and str(module).endswith(".py")
        else f"{module}.{qualname}"
        if module
        else qualname
    )
    lines = [f"<b>{e(kind)}</b> {e(where)}"]
    doc = _first_sentence(report.get("doc") or "")
    if doc:
        lines.append(f"<i>{e(doc)}</i>")
    name = qualname.rpartition(".")[2]
    if report.get("factory_text"):
        lines.append(f"<b>factory</b> <tt>{e(name)}{e(report['factory_text'])}</tt>")
    if report.get("forward_text"):
        callee = (
            f"{report['built']}.forward" if report.get("built") else (f"{name}.forward" if kind != "function" else name)
        )
        lines.append(f"<b>forward</b> <tt>{e(callee)}{e(_short(report, 'forward'))}</tt>")
    if report.get("forward_note"):
        lines.append(f'<span style="color: {theme.WARN}">⚠ {e(report["forward_note"])}</span>')
    return lines


def summary_html(
    waiting: bool, request_entry: str, failure: dict[str, Any] | None, report: dict[str, Any] | None, entry: str
) -> str:
    """The form's Resolve summary: a Resolve under way, the last failure for this entry, then the last report (or
    that there is none yet), warned when the entry has changed since."""
    parts = []
    if waiting:
        parts.append(f"<i>Resolving {html.escape(request_entry)}…</i>")
    if failure is not None and failure.get("entry") == entry:
        error = failure.get("error") or "Resolve failed."
        parts.append(f'<span style="color: {theme.BAD}">✖ {html.escape(error)}</span>')
    if report is None:
        if not parts:
            parts.append(html.escape(NOT_RESOLVED))
    else:
        parts += summary_lines(report)
        if report.get("earlier"):
            parts.append("<i>As Resolve found it in an earlier session; Resolve again to read the code afresh.</i>")
        if report["entry"] != entry:
            parts.append(
                f'<span style="color: {theme.WARN}">⚠ The entry changed since this Resolve; press Resolve again.</span>'
            )
    return "<br>".join(parts)


def _short(report: dict[str, Any], key: str, limit: int = 160) -> str:
    """A long signature (a Hugging Face forward has a dozen optional tensors) as its parameter names;
    the inputs table below lists each with its type and default."""
    text = report.get(f"{key}_text") or ""
    params = report.get(key) or []
    if len(text) <= limit or not params:
        return text
    names = [("*" if p["kind"] == "*args" else "**" if p["kind"] == "**kwargs" else "") + p["name"] for p in params]
    return "(" + ", ".join(names) + ")"


def _first_sentence(doc: str, limit: int = 240) -> str:
    """The doc's first sentence on one line (docstrings wrap their first sentence over lines)."""
    text = " ".join(doc.split("\n\n")[0].split())
    end = text.find(". ")
    text = text[: end + 1] if end >= 0 else text
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"
