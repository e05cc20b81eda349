"""Look at the host: the toolchain's versions (torch_neuronx probed in a child), devices, runtimes, a display."""

from __future__ import annotations

import importlib.util
import os
import platform
import shutil
import subprocess
import sys

from neffbench.toolchain.devices import neuron_devices
from neffbench.toolchain.facts import Component, Facts, dist_version
from neffbench.toolchain.flavour import FLAVOUR_LABELS, neuronx_flavour, neuronx_import_failure

PROBE_TIMEOUT_S = 60.0

# torch_neuronx is imported in a child so that a broken or slow install cannot hang or crash the caller.
_NEURONX_PROBE = (
    "import sys\n"
    "try:\n"
    "    import torch_neuronx\n"
    "except BaseException as exc:\n"
    "    print('ERR', type(exc).__name__ + ': ' + str(exc).splitlines()[0] if str(exc) else type(exc).__name__)\n"
    "    sys.exit(0)\n"
    "print('OK', getattr(torch_neuronx, '__version__', 'unknown'), 'trace' if hasattr(torch_neuronx, 'trace') else 'notrace')\n"
)


def _probe_torch_neuronx() -> tuple[Component, str | None]:
    installed = dist_version("torch-neuronx")
    if installed is None and importlib.util.find_spec("torch_neuronx") is None:
        return Component("torch_neuronx", False, detail="not installed"), None
    try:
        out = subprocess.run(
            [sys.executable, "-c", _NEURONX_PROBE], capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, check=False
        ).stdout.strip()
    except subprocess.TimeoutExpired:
        return (
            Component("torch_neuronx", False, detail=f"import did not finish within {PROBE_TIMEOUT_S:.0f} s"),
            neuronx_flavour(installed),
        )
    status, _, rest = out.partition(" ")
    if status == "OK":
        version, _, trace = rest.partition(" ")
        flavour = neuronx_flavour(version, {"trace": True, "notrace": False}.get(trace))
        detail = "imports" + (f"; {FLAVOUR_LABELS[flavour]}" if flavour else "")
        return Component("torch_neuronx", True, version, detail), flavour
    # A distribution that does not import still tells its flavour by version (TorchNeuron refuses some hosts).
    flavour = neuronx_flavour(installed)
    what = f"; torch-neuronx {installed} is {FLAVOUR_LABELS[flavour]}" if flavour else ""
    return (
        Component(
            "torch_neuronx",
            False,
            installed,
            detail=f"installed but does not import: {neuronx_import_failure(rest) or 'no output'}{what}",
        ),
        flavour,
    )


def neuronx_cc_version() -> str | None:
    """The installed compiler's version: its distribution's, else what ``neuronx-cc --version`` says."""
    return dist_version("neuronx-cc") or _probe_neuronx_cc().version


def _probe_neuronx_cc() -> Component:
    path = shutil.which("neuronx-cc")
    if not path:
        return Component("neuronx-cc", False, detail="not on PATH")
    try:
        proc = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, check=False)
        text = (proc.stdout + proc.stderr).strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Component("neuronx-cc", True, None, f"{path} (version unknown: {exc})")
    version = None
    for token in text.replace("=", " ").split():
        if token[:1].isdigit() and "." in token:
            version = token.rstrip(",")
            break
    return Component("neuronx-cc", True, version, path)


def display() -> str | None:
    """Where a window would appear (DISPLAY, WAYLAND_DISPLAY, an offscreen Qt platform), or None."""
    platform_name = os.environ.get("QT_QPA_PLATFORM", "")
    if platform_name.startswith(("offscreen", "minimal")):
        return f"QT_QPA_PLATFORM={platform_name} (no window is shown)"
    for var in ("WAYLAND_DISPLAY", "DISPLAY"):
        if os.environ.get(var):
            return f"{var}={os.environ[var]}"
    if sys.platform in ("darwin", "win32"):
        return sys.platform
    return None


def _probe_runtimes() -> list[Component]:
    """Found without importing them: nrtpy needs the runtime's shared library path to import at all."""
    out = []
    for name, dist in (("nrtpy", "nrtpy"), ("spike", "spike")):
        found = importlib.util.find_spec(name) is not None
        out.append(Component(name, found, dist_version(dist), "importable" if found else "not installed"))
    for tool in ("neuron-ls", "neuron-explorer", "neuron-profile"):
        path = shutil.which(tool)
        out.append(Component(tool, path is not None, None, path or "not on PATH"))
    return out


def gather() -> Facts:
    """Look at the host. Takes up to a few seconds (it imports torch and probes the toolchain in a child)."""
    try:
        import torch

        torch_c = Component("torch", True, torch.__version__)
    except Exception as exc:  # noqa: BLE001 - any failure to import is what we report
        torch_c = Component("torch", False, detail=f"{type(exc).__name__}: {exc}")
    pyside = dist_version("PySide6-Essentials") or dist_version("PySide6")
    pg = dist_version("pyqtgraph")
    torch_neuronx, flavour = _probe_torch_neuronx()
    return Facts(
        python=Component("python", True, platform.python_version(), sys.executable),
        torch=torch_c,
        pyside6=Component("PySide6", pyside is not None, pyside, "" if pyside else "not installed"),
        pyqtgraph=Component("pyqtgraph", pg is not None, pg, "" if pg else "not installed"),
        torch_neuronx=torch_neuronx,
        neuronx_cc=_probe_neuronx_cc(),
        devices=neuron_devices(),
        display=display(),
        host=platform.node(),
        runtimes=_probe_runtimes(),
        torch_neuronx_flavour=flavour,
    )
