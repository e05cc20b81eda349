"""The Preview tab: token/head choosers, the pair-norm badge, the cast error and the three plot groups."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QSpinBox,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from neffbench.gui.widgets import theme
from neffbench.gui.widgets.flow import TurningSplitter, flow_row
from neffbench.gui.widgets.readable import scrolling
from neffbench.kernels.rope.gui.frequencies import FrequencyPlots
from neffbench.kernels.rope.gui.rotation import RotationPlots
from neffbench.kernels.rope.gui.tables import TableHeatmaps

if TYPE_CHECKING:  # the window must not wait for torch, which neffbench.kernels.rope.preview imports
    from neffbench.kernels.rope.preview import Preview


class RopePreviewPanel(QWidget):
    """Presents a Preview; asks for another bucket through ``bucket_chosen``. It has no CPU check of its own (the
    pair-norm check is RoPE's), so it never asks for one and ignores reports."""

    bucket_chosen = Signal(int)
    check_requested = Signal()
    keep_state_requested = Signal(list)

    PAIR_BADGE_TIP = (
        "Rotation must keep the norm of every rotated pair (times the table's mscale), within the "
        "tolerance of the coarser of the input and cache dtypes, and leave the pass-through lanes "
        "unchanged, for every token and head."
    )

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.preview: Preview | None = None
        self.token_spin = QSpinBox(toolTip="Which example token's lanes to plot (the compile's seeded inputs).")  # type: ignore[call-arg]  # a Qt property keyword
        self.head_spin = QSpinBox(toolTip="Which query head to plot; the key plot shows the key head it shares.")  # type: ignore[call-arg]  # a Qt property keyword
        self.bucket_combo = QComboBox(toolTip="Which bucket's example inputs the rotation uses.")  # type: ignore[call-arg]  # a Qt property keyword
        self.bucket_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.pair_badge = QLabel("Pair norms: …")
        self.pair_badge.setStyleSheet(theme.badge_style(None))
        self.pair_badge.setToolTip(self.PAIR_BADGE_TIP)
        self.cast_label = QLabel()
        self.cast_label.setToolTip(
            "Largest difference between the float32 table (as the kernel computes it) and "
            "the table in the cache dtype the NEFF receives, over every position and column."
        )
        self.status_label = QLabel("Loading torch…")
        self.status_label.setObjectName("previewStatus")
        self.status_label.setWordWrap(True)
        self.tables = TableHeatmaps()
        self.frequencies = FrequencyPlots()
        self.rotation = RotationPlots()
        self.lower_splitter = TurningSplitter()  # frequencies above the rotation when they do not fit side by side
        self.lower_splitter.addWidget(self.frequencies)
        self.lower_splitter.addWidget(self.rotation)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(self.tables)
        self.splitter.addWidget(self.lower_splitter)
        self.splitter.setSizes([420, 480])
        # Each group keeps the height its plots need to stay readable (readable.keep_readable); on a
        # short screen the groups scroll instead of squeezing.
        self.plots = scrolling(self.splitter, sideways=True)
        # Until the first preview arrives (torch is still loading) a sentence beats six empty plots.
        self.placeholder = QLabel(
            "Loading torch in the background…\nThe cos/sin tables, frequencies and rotated "
            "outputs appear here as soon as it is ready."
        )
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setWordWrap(True)  # a long sentence must not set the window's minimum width
        self.placeholder.setStyleSheet(f"color: {theme.ORIGINAL}; font-size: 14pt;")
        self.stack = QStackedWidget()
        self.stack.addWidget(self.placeholder)
        self.stack.addWidget(self.plots)
        self._layout()
        # They choose within a preview: until the first one comes (torch is loading) they are disabled, not blank.
        for chooser in (self.token_spin, self.head_spin, self.bucket_combo):
            chooser.setEnabled(False)
        self.token_spin.valueChanged.connect(self._on_token_spin_value_changed)
        self.head_spin.valueChanged.connect(self._on_token_spin_value_changed)
        self.bucket_combo.activated.connect(self._on_bucket_combo_activated)

    def _layout(self) -> None:
        controls = QHBoxLayout()
        for text, widget in (("&Token", self.token_spin), ("&Head", self.head_spin), ("&Bucket", self.bucket_combo)):
            label = QLabel(text)
            label.setBuddy(widget)
            controls.addWidget(label)
            controls.addWidget(widget)
        controls.addSpacing(12)
        controls.addWidget(self.status_label, 1)
        # The verdicts get a row of their own, wrapping: stating tolerance and reference makes them too
        # long to share one with the choosers, or each other, at a laptop's width.
        verdicts = flow_row(self.pair_badge, self.cast_label)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(controls)
        layout.addWidget(verdicts)
        layout.addWidget(self.stack, 1)

    def chosen_bucket(self) -> int | None:
        return self.bucket_combo.currentData()

    def splitters(self) -> dict[str, QSplitter]:
        return {"": self.splitter, "_lower": self.lower_splitter}

    # ---- what the controller reports ----

    # (file stem, attribute): the whole panel first, then each plot group on its own.
    IMAGES = (("preview", None), ("tables", "tables"), ("frequencies", "frequencies"), ("rotation", "rotation"))

    def save_images(self, out, preview: Preview, *, token: int = 0, head: int = 0, report=None) -> list:
        """Draw ``preview`` for ``token`` and ``head`` and save the panel and each plot group as PNG in ``out``
        (``neffbench preview``; the CPU-check ``report`` is not drawn here, it goes to check.json)."""
        from pathlib import Path

        self.token_spin.setRange(0, max(0, preview.rotation.num_tokens - 1))
        self.head_spin.setRange(0, max(0, preview.rotation.query.shape[1] - 1))
        self.token_spin.setValue(token)
        self.head_spin.setValue(head)
        self.show_preview(preview)
        self.ensurePolished()
        layout = self.layout()
        assert layout is not None  # made with the panel
        layout.activate()
        paths = []
        for stem, attr in self.IMAGES:
            widget = self if attr is None else getattr(self, attr)
            path = Path(out) / f"{stem}.png"
            if not widget.grab().save(str(path)):
                raise OSError(f"could not write {path}")
            paths.append(path)
        return paths

    def show_status(self, text: str, *, error: bool = False) -> None:
        if self.preview is None:  # an error is listed once, beside the choosers
            self.placeholder.setText("No preview until the problems above are fixed." if error else text)
        self.status_label.setText(text)
        self.status_label.setStyleSheet(f"color: {theme.BAD};" if error else "")

    def show_invalid(self, message: str) -> None:
        """The form's spec cannot be previewed: say so, and let no badge vouch for the old plots."""
        shown = f" (the plots still show {self.preview.spec.name}, the last valid spec)" if self.preview else ""
        self.pair_badge.setText("Pair norms: not checked")
        self.pair_badge.setStyleSheet(theme.badge_style(None))
        self.pair_badge.setToolTip(self.PAIR_BADGE_TIP)
        self.cast_label.setText("")
        self.show_status(f"No preview{shown}: {message}", error=True)

    def show_preview(self, preview: Preview) -> None:
        self.preview = preview
        self.stack.setCurrentWidget(self.plots)
        for chooser in (self.token_spin, self.head_spin, self.bucket_combo):
            chooser.setEnabled(True)
        rot = preview.rotation
        self._set_buckets(preview.spec.inputs.num_tokens, rot.bucket)
        for spin, count in ((self.token_spin, rot.num_tokens), (self.head_spin, rot.query.shape[1])):
            spin.blockSignals(True)
            spin.setRange(0, count - 1)
            spin.blockSignals(False)
        self.tables.set_preview(preview)
        self.frequencies.set_preview(preview)
        self.rotation.set_preview(preview, self.token_spin.value(), self.head_spin.value())
        check = preview.pair_check
        self.pair_badge.setText(f"Pair norms {check.summary()}")
        self.pair_badge.setStyleSheet(theme.badge_style(check.passed))
        worst = (
            "" if check.worst is None else "\nLargest deviation: {} token {}, head {}, pair {}.".format(*check.worst)
        )
        self.pair_badge.setToolTip(self.PAIR_BADGE_TIP + worst)
        self.cast_label.setText(self._cast_text(preview))
        ms = preview.timings.get("total", 0.0) * 1e3
        note = f" · {rot.note}" if rot.note else ""
        self.show_status(f"{preview.spec.name}: computed in {ms:.0f} ms{note}")

    def show_check_running(self) -> None:
        """Nothing to show: the panel has no CPU check (see the class)."""

    def show_check(self, report: dict) -> None:
        """Nothing to show: the panel has no CPU check (see the class)."""

    @staticmethod
    def _cast_text(preview: Preview) -> str:
        if preview.cache_dtype == "float32":
            return "Cache float32: nothing lost to a cast (it is the table as computed)"
        pos, col = preview.cast_error_at
        half = preview.rotary_dim // 2
        column = f"cos pair {col}" if col < half else f"sin pair {col - half}"
        return (
            f"Cache {preview.cache_dtype}: max error {preview.cast_error:.3g} vs the float32 table "
            f"(position {pos}, {column})"
        )

    def _set_buckets(self, buckets: tuple[int, ...], current: int) -> None:
        self.bucket_combo.blockSignals(True)
        self.bucket_combo.clear()
        for n in buckets:
            self.bucket_combo.addItem(f"{n} token{'s' if n != 1 else ''}", n)
        self.bucket_combo.setCurrentIndex(max(0, list(buckets).index(current) if current in buckets else 0))
        self.bucket_combo.blockSignals(False)

    # ---- slots ----

    def _on_token_spin_value_changed(self, _value: int) -> None:
        self.rotation.show_token(self.token_spin.value(), self.head_spin.value())

    def _on_bucket_combo_activated(self, index: int) -> None:
        self.bucket_chosen.emit(int(self.bucket_combo.itemData(index)))
