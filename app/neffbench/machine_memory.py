"""How much memory this machine (or its container) has, and has free: /proc/meminfo and the cgroup's limit."""

from __future__ import annotations

from pathlib import Path


def _meminfo() -> dict[str, int]:
    out: dict[str, int] = {}
    try:
        text = Path("/proc/meminfo").read_text(encoding="ascii")
    except OSError:
        return out
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            out[key] = int(parts[0]) * 1024  # the file says kB and means KiB
    return out


def _cgroup_headroom() -> int | None:
    """What this process's cgroup (v2) still allows before its OOM killer acts; None without a limit."""
    try:
        line = next(ln for ln in Path("/proc/self/cgroup").read_text().splitlines() if ln.startswith("0::"))
        group = Path("/sys/fs/cgroup") / line[3:].lstrip("/")
        limit = (group / "memory.max").read_text().strip()
        if limit == "max":
            return None
        return int(limit) - int((group / "memory.current").read_text().strip())
    except (OSError, StopIteration, ValueError):
        return None


def available_bytes() -> int | None:
    """Memory a new job can take without pushing the machine (or its container) into the OOM killer."""
    found = [v for v in (_meminfo().get("MemAvailable"), _cgroup_headroom()) if v is not None]
    return min(found) if found else None


def _cgroup_limit() -> int | None:
    try:
        line = next(ln for ln in Path("/proc/self/cgroup").read_text().splitlines() if ln.startswith("0::"))
        limit = (Path("/sys/fs/cgroup") / line[3:].lstrip("/") / "memory.max").read_text().strip()
        return None if limit == "max" else int(limit)
    except (OSError, StopIteration, ValueError):
        return None


def total_bytes() -> int | None:
    """All the memory this process may ever use: the machine's, or its container's limit when lower."""
    found = [v for v in (_meminfo().get("MemTotal"), _cgroup_limit()) if v is not None]
    return min(found) if found else None


def gib(n: float) -> str:
    return f"{n / 2**30:.1f} GiB"
