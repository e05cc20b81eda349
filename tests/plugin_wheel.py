"""Build the demo plugin's wheel (a zip with its entry point) and pip-install it into a folder of its own.

The wheel is written by hand, so no build backend is needed; pip installs it as it installs any
wheel, and the folder is put on the path of the processes that should see the plugin.
"""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
import zipfile
from pathlib import Path

SOURCE = Path(__file__).resolve().parent / "data" / "plugin"
DIST = "neffbench_demo_kernel"
VERSION = "0.1.0"
ENTRY_POINTS = "[neffbench.kernels]\ndemo_scale = neffbench_demo_kernel:KERNEL\n"


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_wheel(out_dir: Path) -> Path:
    info = f"{DIST}-{VERSION}.dist-info"
    files: dict[str, bytes] = {}
    for path in sorted((SOURCE / DIST).rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            files[path.relative_to(SOURCE).as_posix()] = path.read_bytes()
    files[f"{info}/METADATA"] = f"Metadata-Version: 2.1\nName: neffbench-demo-kernel\nVersion: {VERSION}\n".encode()
    files[f"{info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: neffbench-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    files[f"{info}/entry_points.txt"] = ENTRY_POINTS.encode()
    record = [_record_line(n, d) for n, d in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel = out_dir / f"{DIST}-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return wheel


def install(target: Path) -> Path:
    """pip-install the plugin's wheel into ``target``; returns ``target``."""
    wheel = build_wheel(target.parent)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
        timeout=120,
    )
    return target
