"""``neffbench preview``: render the workbench's preview plots to PNG files without a display."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from neffbench.cli.spec_args import add_spec_arguments, checked_spec
from neffbench.kernels import registry
from neffbench.kernels.bucket_words import buckets_text


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "preview",
        help="render a kernel's preview plots (and its CPU check) to PNG",
        description="Compute the workbench's preview for a spec (the same kernel that gets "
        "compiled) and save its plots as PNG files, plus preview.json with the figures. Kernels "
        "without a preview of their own (the module kernel) get the CPU check instead: outputs, "
        "statistics, histograms, the NEFF interface and operator counts, in check.png and check.json. "
        "Needs no display: Qt renders offscreen.",
    )
    add_spec_arguments(p)
    p.add_argument("--out", required=True, type=Path, metavar="DIR", help="directory for the PNG files")
    p.add_argument(
        "--at",
        dest="bucket",
        type=int,
        default=None,
        metavar="N",
        help="the bucket whose example inputs are used, by its value (default: the first)",
    )
    p.add_argument(
        "--size", default="1400x900", metavar="WxH", help="size of the full preview image (default 1400x900)"
    )
    p.add_argument("--check", action="store_true", help="also run the CPU check (in a child process) and save it")
    for kernel in registry.available():  # what each kernel's panel lets one choose (RoPE: a token and a head)
        kernel.cli.add_preview_options(p.add_argument_group(f"{kernel.title or kernel.name} preview"))
    p.set_defaults(func=run)


def _size(text: str) -> tuple[int, int]:
    w, _, h = text.lower().partition("x")
    return int(w), int(h)


def run(args: argparse.Namespace) -> int:
    spec = checked_spec(args, refusal="nothing to preview")
    if spec is None:
        return 2
    kernel = registry.for_spec(spec)
    bucket = None
    if args.bucket is not None:
        bucket = kernel.pick_bucket(spec, args.bucket)
        if bucket is None:
            print(
                f"--at {args.bucket} is not one of the spec's buckets ({buckets_text(kernel.buckets(spec))}).",
                file=sys.stderr,
            )
            return 2
    try:
        width, height = _size(args.size)
    except ValueError:
        print(f"--size must look like 1400x900, got {args.size!r}.", file=sys.stderr)
        return 2
    try:
        preview = kernel.preview(spec, bucket)
    except ValueError as exc:  # the kernel's own refusals
        print(f"Cannot preview {args.spec}: {exc}", file=sys.stderr)
        return 2
    report = None
    if preview is None or args.check:
        from neffbench.probe.client import ProbeError, ask
        from neffbench.spec import to_dict

        try:
            report = ask("check", {"spec": to_dict(spec), "bucket": bucket})
        except ProbeError as exc:
            print(f"The CPU check of {args.spec} did not report: {exc}", file=sys.stderr)
            return 1
    args.out.mkdir(parents=True, exist_ok=True)
    paths = render(kernel, preview, report, args.out, size=(width, height), **kernel.cli.preview_options(args))
    if preview is not None:
        paths.append(_write_json(args.out / "preview.json", kernel.cli.preview_numbers(preview)))
    if report is not None:
        paths.append(_write_json(args.out / "check.json", report))
    for path in paths:
        print(path)
    for line in kernel.cli.preview_summary(preview) if preview is not None else []:
        print(line)
    if report is not None:
        problems = report.get("problems") or []
        errors = [p["message"] for p in problems if p["severity"] == "error"] or (
            [report["error"]] if report.get("error") else []
        )
        print(
            f"CPU check: {'passed' if report.get('ok') else 'FAILED'}"
            f" ({len(errors)} error(s), {len(problems) - len(errors) if problems else 0} warning(s))"
        )
        for message in errors:
            print(f"  error: {message}")
        if not report.get("ok"):
            return 1
    return 0


def _write_json(path: Path, data) -> Path:
    path.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
    return path


def render(kernel, preview, report, out: Path, *, size: tuple[int, int] = (1400, 900), **options) -> list[Path]:
    """Draw the preview (and the CPU check) with the window's own panel for the kernel, offscreen, as PNG;
    ``options`` are the kernel's ``cli.preview_options``."""
    import shiboken6
    from PySide6.QtWidgets import QApplication, QWidget

    app = QApplication.instance() or QApplication(["neffbench-preview", "-platform", "offscreen"])
    assert isinstance(app, QApplication)  # the panel's widgets need one
    from neffbench.gui.preview.contribution import preview_panel
    from neffbench.gui.widgets import theme

    theme.apply(app)
    panel = preview_panel(kernel)
    assert isinstance(panel, QWidget)  # every Preview panel is a widget
    panel.resize(*size)
    paths = panel.save_images(out, preview, report=report, **options)
    # Delete the scene graph now, while the application still exists: left to interpreter
    # shutdown, pyqtgraph's items can outlive QApplication and crash on the way out.
    shiboken6.delete(panel)
    return paths
