"""The user's home directory shortened to ``~`` in text that leaves this machine, streamed so size costs no memory."""

from __future__ import annotations

import builtins
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO

BLOCK = 1 << 20
# A home is replaced only as a whole path name: "/home/al" must not eat the start of "/home/alice"
# or the end of "/mnt/home/al". Non-ASCII bytes count as name characters (UTF-8 file names).
_NAME = rb"[\w.\-+@~\x80-\xff]"


def _user() -> str | None:
    import getpass

    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no LOGNAME/USER and no passwd entry (some containers)
        return None


def _passwd_home() -> str | None:
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_dir
    except (ImportError, KeyError):
        return None


def home_forms() -> list[str]:
    """Every spelling of this user's home a job file may hold, longest first (so the longest wins)."""
    candidates: list[str | None] = [os.environ.get("HOME"), _passwd_home()]
    try:
        candidates.append(str(Path.home()))
    except RuntimeError:
        pass
    user = _user()
    if user:
        candidates += [f"/home/{user}", f"/Users/{user}"]
    forms: set[str] = set()
    for c in candidates:
        if not c:
            continue
        for form in (c.rstrip("/"), os.path.realpath(c)):
            # "/" as HOME (root in some containers) would turn every path into "~..."; nothing to hide there.
            if len(Path(form).parts) < 2:
                continue
            forms.add(form)
            # json.dumps escapes non-ASCII and backslashes: match the home as job.json spells it too.
            forms.add(json.dumps(form)[1:-1])
    return sorted(forms, key=lambda f: (-len(f), f))


class HomeShortener:
    """Replaces the home forms by ``~`` in bytes; ``copy`` streams a file through it block by block."""

    def __init__(self, forms: Iterable[str] | None = None) -> None:
        # Absolute paths only: each starts with "/", which the pattern matches first as a literal, so
        # re skips ahead to the next "/" (five times faster than trying every form at every byte).
        encoded = [e for e in (os.fsencode(f) for f in (home_forms() if forms is None else forms)) if e[:1] == b"/"]
        rests = b"|".join(re.escape(e[1:]) for e in encoded)
        self.pattern = re.compile(rb"/(?<!" + _NAME + rb"/)(?:" + rests + rb")(?!" + _NAME + rb")") if encoded else None
        # Bytes held back at the end of a block: enough for a whole form and the character after it.
        self.keep = max((len(e) for e in encoded), default=0) + 1
        self._seps = [sep for sep in (b"\n", b" ", b'"', b"\t", b",") if not any(sep in e for e in encoded)]

    def bytes(self, data: bytes) -> bytes:
        return data if self.pattern is None else self.pattern.sub(b"~", data)

    def text(self, text: str) -> str:
        return self.bytes(text.encode("utf-8", "surrogateescape")).decode("utf-8", "surrogateescape")

    def copy(self, src: BinaryIO, dst: BinaryIO, block: int = BLOCK) -> int:
        """Copy ``src`` to ``dst`` shortened; returns the bytes written. Memory stays near ``block`` however
        long the file or its lines are.

        Each block is cut after its last separator (a newline, a space...: a byte no home contains and no
        name continues with), where replacing on either side alone gives what replacing the whole would;
        that part goes through ``re.sub``. A block without one (a giant token) is cut ``keep`` bytes
        from its end instead, replacing only matches whose following bytes are in the buffer, and the
        byte before the cut is carried so that the next block's look-behind sees it.
        """
        written = 0
        prev = b""  # empty at a clean cut; else the byte before ``data``
        data = b""
        while True:
            chunk = src.read(block)
            data += chunk
            final = not chunk
            split = len(data) if final else max((data.rfind(sep) for sep in self._seps), default=-1) + 1
            clean = split > 0
            cut = split if clean else len(data) - self.keep
            if cut > 0 or final:
                if not prev and clean:
                    out, prev, data = self.bytes(data[:cut]), b"", data[cut:]
                else:
                    out, prev, data = self._cut(prev, data, cut, clean)
                dst.write(out)
                written += len(out)
            if final:
                return written

    # builtins.bytes: in the class body, ``bytes`` is the method above.
    def _cut(
        self, prev: builtins.bytes, data: builtins.bytes, cut: int, clean: bool
    ) -> tuple[builtins.bytes, builtins.bytes, builtins.bytes]:
        buf, off = prev + data, len(prev)
        pieces: list[builtins.bytes] = []
        pos = off
        if self.pattern is not None:
            for m in self.pattern.finditer(buf, off):  # the look-behind sees ``prev`` before ``off``
                if m.start() >= off + cut:
                    break
                pieces += [buf[pos : m.start()], b"~"]
                pos = m.end()
        end = max(off + cut, pos)  # a clean cut is never inside a match, so then end == off + cut
        pieces.append(buf[pos:end])
        return b"".join(pieces), b"" if clean else buf[end - 1 : end], buf[end:]
