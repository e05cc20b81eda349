"""What persists across launches (QSettings): geometry, splitters, the last spec, the workdir, the tab."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings

ORGANIZATION = "neffbench"
APPLICATION = "NEFF Workbench"


class Settings:
    """Typed access to the window's QSettings; tests pass an ini file of their own."""

    def __init__(self, qsettings: QSettings | None = None):
        self.q = qsettings if qsettings is not None else QSettings(ORGANIZATION, APPLICATION)

    @classmethod
    def at(cls, path: str | Path) -> Settings:
        return cls(QSettings(str(path), QSettings.Format.IniFormat))

    def bytes(self, key: str) -> QByteArray | None:
        value = self.q.value(key)
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None

    def set_bytes(self, key: str, value: QByteArray) -> None:
        self.q.setValue(key, value)

    def text(self, key: str, default: str = "") -> str:
        value = self.q.value(key, default)
        return value if isinstance(value, str) else default

    def set_text(self, key: str, value: str) -> None:
        self.q.setValue(key, value)

    def number(self, key: str, default: int = 0) -> int:
        value = self.q.value(key, default)
        if not isinstance(value, (str, int, float)):
            return default
        try:
            return int(value)
        except (TypeError, ValueError):
            return default

    def set_number(self, key: str, value: int) -> None:
        self.q.setValue(key, int(value))

    def sync(self) -> None:
        self.q.sync()
