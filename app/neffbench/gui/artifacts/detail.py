"""What the Artifacts tab shows of a selection: a NEFF's inspector detail, a job's record (its failure
first), the diff of two NEFFs."""

from __future__ import annotations

import json

from PySide6.QtGui import QColor
from PySide6.QtWidgets import QPlainTextEdit, QTreeWidget, QTreeWidgetItem

from neffbench.gui.compile.panel import numerics_text
from neffbench.gui.widgets import theme
from neffbench.jobs.workdir_jobs import Artifact
from neffbench.spec import SpecError, dumps_toml, from_dict
from neffbench.targets import codename_label
from neffbench.usercode import closure
from neffbench.views.job import JobView
from neffbench.views.job_diff import diff_built, diff_jobs


def _value(v) -> str:
    if v is None:
        return "—"
    if isinstance(v, (list, dict, tuple)):
        return json.dumps(v, separators=(", ", ": "))
    return str(v)


def add(tree: QTreeWidget, parent, field: str, value, *, colour: str | None = None) -> QTreeWidgetItem:
    item = QTreeWidgetItem([field, _value(value)])
    item.setToolTip(1, _value(value))
    if colour:
        item.setForeground(1, QColor(colour))
    if parent is None:
        tree.addTopLevelItem(item)
    else:
        parent.addChild(item)
    return item


def fill_neff(tree: QTreeWidget, art: Artifact) -> None:
    if art.neff is None:
        add(tree, None, "NEFF", art.io or "this job made no NEFF", colour=theme.WARN)
        return
    rec = art.neff
    add(tree, None, "Path", rec.path)
    add(tree, None, "Size", f"{rec.size:,} bytes")
    if rec.info is None:
        add(tree, None, "Error", rec.error, colour=theme.BAD)
        return
    info = rec.info
    for key, value in (
        ("sha256", info.sha256),
        ("Compiler version", info.compiler_version),
        ("Target", codename_label(info.target)),
        ("Compressed", info.compressed),
        ("Subgraphs", ", ".join(info.subgraphs) or None),
        ("Constants", f"{info.constants_count} ({info.constants_bytes:,} bytes)"),
    ):
        add(tree, None, key, value)
    header = add(tree, None, "Header", "")
    for key, value in info.header.to_dict().items():
        add(tree, header, key, value)
    names = art.job.interface_names if art.job is not None else {}
    for title, tensors in (("Inputs", info.inputs), ("Outputs", info.outputs)):
        group = add(tree, None, title, f"{len(tensors)}")
        for t in tensors:
            add(
                tree,
                group,
                f"{t.name} ({names[t.name]})" if t.name in names else t.name,
                f"{t.dtype or '?'} {list(t.shape) if t.shape is not None else '?'}"
                + (f" · {t.nbytes:,} bytes" if t.nbytes is not None else ""),
            )
        group.setExpanded(True)
    members = add(tree, None, "Members", f"{len(info.members)}")
    for m in info.members:
        add(tree, members, m.name, f"{m.size:,} bytes ({m.type})")
    for warning in (*info.warnings, *rec.warnings):
        add(tree, None, "Warning", warning, colour=theme.WARN)


def fill_job(tree: QTreeWidget, spec_text: QPlainTextEdit, art: Artifact) -> None:
    if art.job_dir is None:
        add(tree, None, "Job", "no job.json above this NEFF", colour=theme.WARN)
        return
    if art.job_error:
        add(tree, None, "Error", art.job_error, colour=theme.BAD)
    add(tree, None, "Directory", str(art.job_dir))
    record = art.job
    if record is None:  # unreadable, or a newer neffbench's record: the error above says which
        return
    for key, value in (
        ("job_id", record.job_id),
        ("outcome", record.outcome),
        ("reason", record.reason),
        ("backend", record.backend),
        ("backend_reason", record.backend_reason),
        ("created", record.created),
        ("finished", record.finished),
    ):
        add(tree, None, key, value, colour=theme.JOB_OUTCOME_COLOURS.get(value or "") if key == "outcome" else None)
    _fill_failure(tree, record)
    duration = record.duration_s
    add(tree, None, "duration", f"{duration:.1f} s" if duration is not None else None)
    add(tree, None, "numerics", numerics_text(record.numerics))
    _fill_sources(tree, record)
    command = record.compiler_command
    cmd = add(tree, None, "compiler command", command.get("note") or "")
    for key in ("requested", "actual", "dropped"):
        value = command.get(key)
        add(tree, cmd, key, " ".join(value) if isinstance(value, list) and key != "dropped" else value)
    cmd.setExpanded(True)
    stages = add(tree, None, "timings", "")
    for name, entry in record.stages.items():
        d = entry.get("duration_s") if isinstance(entry, dict) else None
        add(tree, stages, name, f"{d:.2f} s" if isinstance(d, (int, float)) else "—")
    stages.setExpanded(True)
    spec = record.spec
    if spec:
        try:
            spec_text.setPlainText(dumps_toml(from_dict(spec)))
        except SpecError as exc:
            spec_text.setPlainText(f"# this job's spec no longer loads: {exc}\n{json.dumps(spec, indent=2)}")


def _fill_sources(tree: QTreeWidget, record: JobView) -> None:
    """What the module was built from: the user's files and checkpoints with their sha256, libraries, weights."""
    block = record.sources
    if not block or not (block.get("files") or block.get("distributions")):
        return
    built = add(tree, None, "built from", closure.summary(block))
    for f in block.get("files") or []:
        item = add(tree, built, f["kind"], f"{f['name']}  sha256 {f['sha256'][:12]}")
        item.setToolTip(1, f["path"])
    for dist, version in (block.get("distributions") or {}).items():
        add(tree, built, "library", f"{dist} {version}")
    weights = record.weights
    if weights.get("sha256"):
        add(
            tree,
            built,
            "weights",
            f"sha256 {weights['sha256'][:12]} ({weights.get('tensors')} tensors, {weights.get('method')})",
        )


def _fill_failure(tree: QTreeWidget, record: JobView) -> None:
    """A failed job's first error (code, message, the lines around it) and its exit status, near the top."""
    error = record.error
    if record.outcome != "succeeded" and error is not None and error.get("message"):
        code = error.get("code")
        message = str(error["message"])
        head = f"[{code}] {message}" if code and code not in message else message
        item = add(tree, None, "first error", head.split("\n", 1)[0], colour=theme.BAD)
        item.setToolTip(1, head)
        if error.get("help"):
            add(tree, item, "code", error["help"])
        where = error.get("line_number")
        add(tree, item, "where", f"job.log line {where}" if where else "job.log")
        for line in error.get("before") or []:
            add(tree, item, "", line)
        add(tree, item, ">", error.get("line"), colour=theme.BAD)
        for line in error.get("after") or []:
            add(tree, item, "", line)
        item.setExpanded(True)
    compiler = record.compiler
    if compiler.get("exit_code") is not None:
        add(
            tree,
            None,
            "compiler exit",
            f"{compiler['exit_code']}: {compiler.get('exit_explanation')}",
            colour=theme.BAD if compiler["exit_code"] else None,
        )


def fill_diff(tree: QTreeWidget, a: Artifact, b: Artifact) -> None:
    if a.neff and a.neff.info and b.neff and b.neff.info:
        diffs = diff_built(a.neff.info, b.neff.info, job_a=a.job, job_b=b.job)
    elif a.job and b.job:  # jobs without a NEFF (cpu-check): their records are what there is to compare
        diffs = diff_jobs(a.job, b.job)
    else:
        item = QTreeWidgetItem(["", "", "Diff compares two readable NEFFs or two jobs; select two rows.", ""])
        tree.addTopLevelItem(item)
        return
    if not diffs:
        tree.addTopLevelItem(QTreeWidgetItem(["", "", "No differences.", ""]))
    for d in diffs:
        item = QTreeWidgetItem([d.section, d.key, _value(d.a), _value(d.b)])
        item.setToolTip(2, _value(d.a))
        item.setToolTip(3, _value(d.b))
        tree.addTopLevelItem(item)
    tree.setHeaderLabels(["Section", "Field", f"A: {a.job_id or a.name}", f"B: {b.job_id or b.name}"])
    for col in range(2):
        tree.resizeColumnToContents(col)
