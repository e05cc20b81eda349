"""``neffbench preview``: render the workbench's preview plots to PNG files without a display."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from neffbench.cli.spec_args import add_spec_arguments, checked_spec

# (file stem, panel attribute): the whole tab first, then each plot group on its own.
PLOTS = (("preview", None), ("tables", "tables"), ("frequencies", "frequencies"), ("rotation", "rotation"))


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("preview", help="render the preview plots (cos/sin tables, frequencies, rotation) to PNG",
                       description="Compute the workbench's preview for a spec (the same kernel that gets "
                       "compiled) and save its plots as PNG files, plus preview.json with the figures. Needs no "
                       "display: Qt renders offscreen.")
    add_spec_arguments(p)
    p.add_argument("--out", required=True, type=Path, metavar="DIR", help="directory for the PNG files")
    p.add_argument("--token", type=int, default=0, help="example token whose lanes are plotted (default 0)")
    p.add_argument("--head", type=int, default=0, help="query head whose lanes are plotted (default 0)")
    p.add_argument("--at", dest="bucket", type=int, default=None, metavar="N",
                   help="the num_tokens bucket whose example inputs are used (default: the first)")
    p.add_argument("--size", default="1400x900", metavar="WxH", help="size of the full preview image (default 1400x900)")
    p.set_defaults(func=run)


def _size(text: str) -> tuple[int, int]:
    w, _, h = text.lower().partition("x")
    return int(w), int(h)


def run(args: argparse.Namespace) -> int:
    spec = checked_spec(args, refusal="nothing to preview")
    if spec is None:
        return 2
    if args.bucket is not None and args.bucket not in spec.inputs.num_tokens:
        print(f"--at {args.bucket} is not one of the spec's buckets {list(spec.inputs.num_tokens)}.", file=sys.stderr)
        return 2
    try:
        width, height = _size(args.size)
    except ValueError:
        print(f"--size must look like 1400x900, got {args.size!r}.", file=sys.stderr)
        return 2
    from neffbench.kernels.rope.preview import PreviewError, compute

    try:
        preview = compute(spec, bucket=args.bucket)
    except PreviewError as exc:
        print(f"Cannot preview {args.spec}: {exc}", file=sys.stderr)
        return 2
    paths = render(preview, args.out, token=args.token, head=args.head, size=(width, height))
    (args.out / "preview.json").write_text(json.dumps(preview.numbers(), indent=2) + "\n", encoding="utf-8")
    for path in paths:
        print(path)
    print(args.out / "preview.json")
    print(f"pair-norm check {preview.pair_check.summary()}")
    return 0


def render(preview, out: Path, *, token: int = 0, head: int = 0, size: tuple[int, int] = (1400, 900)) -> list[Path]:
    """Draw the preview with the window's own widgets, offscreen, and save each as PNG."""
    import shiboken6
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(["neffbench-preview", "-platform", "offscreen"])
    from neffbench.gui import theme
    from neffbench.gui.preview import PreviewPanel

    theme.apply(app)
    out.mkdir(parents=True, exist_ok=True)
    panel = PreviewPanel()
    panel.resize(*size)
    panel.token_spin.setRange(0, max(0, preview.rotation.num_tokens - 1))
    panel.head_spin.setRange(0, max(0, preview.rotation.query.shape[1] - 1))
    panel.token_spin.setValue(token)
    panel.head_spin.setValue(head)
    panel.show_preview(preview)
    # Lay out and paint once without showing anything on screen.
    panel.ensurePolished()
    panel.layout().activate()
    paths = []
    for stem, attr in PLOTS:
        widget = panel if attr is None else getattr(panel, attr)
        path = out / f"{stem}.png"
        if not widget.grab().save(str(path)):
            raise OSError(f"could not write {path}")
        paths.append(path)
    # Delete the scene graph now, while the application still exists: left to interpreter
    # shutdown, pyqtgraph's items can outlive QApplication and crash on the way out.
    shiboken6.delete(panel)
    return paths
