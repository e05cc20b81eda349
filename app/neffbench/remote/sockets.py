"""Listening TCP sockets as the kernel reports them (``/proc/net/tcp*``), by the process that holds them, and
a free port for a VNC server. How a server was told to listen is a flag; where it listens is read here."""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

_PROC = Path("/proc")
_LISTEN = "0A"
VNC_BASE_PORT = 5900
VNC_PORTS = 100


@dataclass(frozen=True)
class Listening:
    address: str
    port: int
    inode: int

    @property
    def loopback(self) -> bool:
        return ipaddress.ip_address(self.address).is_loopback


def _address(hex_address: str) -> str:
    raw = bytes.fromhex(hex_address)
    # The kernel prints each 32-bit word in host (little-endian) order.
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    return str(ipaddress.ip_address(words))


def _table(path: Path) -> Iterator[Listening]:
    try:
        lines = path.read_text(encoding="ascii").splitlines()[1:]
    except OSError:
        return
    for line in lines:
        fields = line.split()
        if len(fields) > 9 and fields[3] == _LISTEN:
            host, _, port = fields[1].partition(":")
            yield Listening(_address(host), int(port, 16), int(fields[9]))


def socket_inodes(pid: int) -> set[int]:
    """The inodes of the sockets ``pid`` holds open (empty when it has gone or is not ours to read)."""
    out: set[int] = set()
    try:
        entries = list((_PROC / str(pid) / "fd").iterdir())
    except OSError:
        return out
    for entry in entries:
        try:
            target = os.readlink(entry)
        except OSError:
            continue
        if target.startswith("socket:["):
            out.add(int(target[8:-1]))
    return out


def listening(pids: Iterable[int] | None = None) -> list[Listening]:
    """Every listening TCP socket (IPv4 and IPv6), or only those that one of ``pids`` holds."""
    found = [s for name in ("tcp", "tcp6") for s in _table(_PROC / "net" / name)]
    if pids is None:
        return found
    inodes = set().union(*(socket_inodes(pid) for pid in pids))
    return [s for s in found if s.inode in inodes]


def port_free(port: int, host: str = "127.0.0.1") -> bool:
    """Whether ``host:port`` can be bound now (a later bind by someone else can still take it first)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def free_vnc_ports(start: int = VNC_BASE_PORT, count: int = VNC_PORTS) -> Iterator[int]:
    """The VNC ports from ``start`` on that nobody listens on, lowest first (VNC viewers count from 5900)."""
    taken = {s.port for s in listening()}
    for port in range(start, start + count):
        if port not in taken and port_free(port):
            yield port
