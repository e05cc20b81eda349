"""What this host has (Python, torch, Qt, the Neuron toolchain, devices, a display) and what the workbench will do about it."""

from __future__ import annotations

import glob
import importlib.metadata
import importlib.util
import os
import platform
import re
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass, field

PROBE_TIMEOUT_S = 60.0
# torch-neuronx 2.13.3.0 (Neuron SDK 2.33) is the first TorchNeuron release: the native PyTorch backend,
# torch.compile(backend="neuron"), without torch_neuronx.trace. The XLA flavour ends with 2.9.0.2.15.
NATIVE_FROM = (2, 13, 3)
FLAVOUR_LABELS = {
    "native": 'TorchNeuron, the native flavour (torch.compile backend "neuron", no torch_neuronx.trace; '
              "SDK 2.33+, Trn2/Trn3)",
    "legacy": "the legacy XLA flavour (torch_neuronx.trace; SDK ≤ 2.31)",
}

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


@dataclass
class Component:
    name: str
    found: bool
    version: str | None = None
    detail: str = ""


@dataclass
class Facts:
    python: Component
    torch: Component
    pyside6: Component
    pyqtgraph: Component
    torch_neuronx: Component
    neuronx_cc: Component
    devices: list[str] = field(default_factory=list)
    display: str | None = None
    host: str = ""
    # What runs NEFFs after a compile (nrtpy, spike) and the tools around them (neuron-ls, the profilers).
    runtimes: list[Component] = field(default_factory=list)
    # "native" (TorchNeuron) or "legacy" (torch_neuronx.trace), told by version or by the trace attribute.
    torch_neuronx_flavour: str | None = None

    @property
    def neuron_toolchain(self) -> bool:
        return self.torch_neuronx.found and self.neuronx_cc.found

    def to_dict(self) -> dict:
        out = asdict(self)
        out["neuron_toolchain"] = self.neuron_toolchain
        out["backend"], out["backend_reason"] = choose_backend("auto", self)
        out["cpu_backend"], out["cpu_backend_reason"] = use_cpu_backend("auto", self)
        out["run_runtime"], out["run_runtime_reason"] = choose_run_runtime(self)
        out["stack"] = self.stack().to_dict()
        out["advice"] = advice(self)
        return out

    def stack(self):
        """Which stack this is (the legacy Neuron venv or not) and its known bad combinations (neffbench.stack)."""
        from neffbench.stack import detect

        return detect(choose_backend("auto", self)[0], self.torch_neuronx_flavour)


def dist_version(dist: str) -> str | None:
    """The installed version of a distribution, or None."""
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def neuronx_import_failure(message: str) -> str:
    """What a failed ``import torch_neuronx`` means, from the first line of its error."""
    if "WRONG PACKAGE" in message:
        return "the PyPI placeholder is installed (real torch-neuronx comes from AWS's package index)"
    return message


def release_of(version: str | None) -> tuple[int, int, int] | None:
    """(2, 13, 3) from ``2.13.3.0+abc``; None when the version does not start with three numbers."""
    m = re.match(r"(\d+)\.(\d+)\.(\d+)", version or "")
    return (int(m[1]), int(m[2]), int(m[3])) if m else None


def neuronx_flavour(version: str | None, has_trace: bool | None = None) -> str | None:
    """``native`` (TorchNeuron) for version 2.13.3+ or a module without ``trace``, ``legacy`` otherwise;
    None when neither the version nor the module tells."""
    release = release_of(version)
    if (release is not None and release >= NATIVE_FROM) or has_trace is False:
        return "native"
    if release is not None or has_trace:
        return "legacy"
    return None


def flavour_reason(version: str | None, flavour: str | None) -> str:
    """Why ``flavour``, in words: ``version 2.13.3 or later`` or ``it has no torch_neuronx.trace``."""
    if flavour == "native":
        release = release_of(version)
        return "version 2.13.3 or later" if release and release >= NATIVE_FROM else "it has no torch_neuronx.trace"
    if flavour == "legacy":
        return "a version before 2.13.3, with torch_neuronx.trace"
    return "its flavour could not be told"


def _probe_torch_neuronx() -> tuple[Component, str | None]:
    installed = dist_version("torch-neuronx")
    if installed is None and importlib.util.find_spec("torch_neuronx") is None:
        return Component("torch_neuronx", False, detail="not installed"), None
    try:
        out = subprocess.run([sys.executable, "-c", _NEURONX_PROBE], capture_output=True, text=True,
                             timeout=PROBE_TIMEOUT_S, check=False).stdout.strip()
    except subprocess.TimeoutExpired:
        return (Component("torch_neuronx", False, detail=f"import did not finish within {PROBE_TIMEOUT_S:.0f} s"),
                neuronx_flavour(installed))
    status, _, rest = out.partition(" ")
    if status == "OK":
        version, _, trace = rest.partition(" ")
        flavour = neuronx_flavour(version, {"trace": True, "notrace": False}.get(trace))
        detail = "imports" + (f"; {FLAVOUR_LABELS[flavour]}" if flavour else "")
        return Component("torch_neuronx", True, version, detail), flavour
    # A distribution that does not import still tells its flavour by version (TorchNeuron refuses some hosts).
    flavour = neuronx_flavour(installed)
    what = f"; torch-neuronx {installed} is {FLAVOUR_LABELS[flavour]}" if flavour else ""
    return (Component("torch_neuronx", False, installed,
                      detail=f"installed but does not import: {neuronx_import_failure(rest) or 'no output'}{what}"),
            flavour)


def neuronx_cc_version() -> str | None:
    """The installed compiler's version: its distribution's, else what ``neuronx-cc --version`` says."""
    return dist_version("neuronx-cc") or _probe_neuronx_cc().version


def _probe_neuronx_cc() -> Component:
    path = shutil.which("neuronx-cc")
    if not path:
        return Component("neuronx-cc", False, detail="not on PATH")
    try:
        proc = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=PROBE_TIMEOUT_S,
                              check=False)
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


def neuron_devices() -> list[str]:
    return sorted(glob.glob("/dev/neuron*"))


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


def choose_run_runtime(facts: Facts) -> tuple[str, str]:
    """What ``neffbench run --runtime auto`` will use for a job's NEFF, and why."""
    found = {c.name: c.found for c in facts.runtimes}
    if facts.devices:
        for name in ("nrtpy", "spike"):
            if found.get(name):
                return name, f"{name} is installed and a Neuron device is present"
        if facts.torch_neuronx.found and facts.torch_neuronx_flavour != "native":
            return "torchscript", "torch_neuronx is installed and a Neuron device is present (model.pt)"
        if facts.torch_neuronx_flavour == "native":  # TorchNeuron keeps no TorchScript holding the NEFF
            return "cpu", "a Neuron device is present, but TorchNeuron jobs have no model.pt: install nrtpy or spike"
        return "cpu", "a Neuron device is present but no runtime to load a NEFF (nrtpy, spike, torch_neuronx)"
    return "cpu", "no Neuron device under /dev/neuron*: runs time the job's module on the CPU, labelled CPU"


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


def choose_backend(requested: str, facts: Facts) -> tuple[str, str]:
    """Which backend a compile uses and one line saying why."""
    if requested == "cpu-check":
        return "cpu-check", "cpu-check requested: torch.jit.trace on CPU only, no NEFF is made"
    if requested == "neuron":
        return "neuron", "neuron requested"
    if requested == "torchneuron":
        return "torchneuron", "torchneuron requested"
    version = facts.torch_neuronx.version
    if facts.neuron_toolchain:
        flavour = facts.torch_neuronx_flavour
        if flavour == "native":
            return "torchneuron", (f"torch_neuronx {version} imports and neuronx-cc is on PATH; it is TorchNeuron "
                                   f"({flavour_reason(version, flavour)})")
        why = f"; it is the legacy XLA flavour ({flavour_reason(version, flavour)})" if flavour == "legacy" else ""
        return "neuron", f"torch_neuronx {version} imports and neuronx-cc is on PATH{why}"
    missing = [c.name for c in (facts.torch_neuronx, facts.neuronx_cc) if not c.found]
    return "cpu-check", (f"{' and '.join(missing)} not available, so compiles run the CPU check "
                         "(torch.jit.trace) and make no NEFF")


def use_cpu_backend(setting: str, facts: Facts) -> tuple[bool, str]:
    """Whether torch_neuronx.trace gets cpu_backend=True, and why."""
    if setting == "on":
        return True, "cpu_backend on in the spec"
    if setting == "off":
        return False, "cpu_backend off in the spec"
    if facts.devices:
        return False, f"Neuron device present ({facts.devices[0]})"
    return True, "no Neuron device under /dev/neuron*"


def advice(facts: Facts) -> list[str]:
    """What the workbench will do about each finding, as sentences."""
    from neffbench.jobs.protocol import BACKEND_LABELS

    out = []
    backend, why = choose_backend("auto", facts)
    out.append(f"Compiles use the {backend} backend, {BACKEND_LABELS[backend]}: {why}.")
    out.extend(f"Warning: {w}" for w in facts.stack().warnings)
    if facts.torch_neuronx_flavour:
        out.append(f"The installed torch_neuronx is {FLAVOUR_LABELS[facts.torch_neuronx_flavour]}.")
    if backend == "torchneuron":
        if facts.devices:
            out.append(f"TorchNeuron compiles on a Trn2/Trn3 instance only: a Neuron device is present "
                       f"({facts.devices[0]}), and outputs are verified on it.")
        else:
            out.append("TorchNeuron compiles on a Trn2/Trn3 instance only and this host has no Neuron device under "
                       "/dev/neuron*, so its compiles fail here; the legacy neuron backend (torch-neuronx 2.9 and "
                       "earlier, SDK ≤ 2.31) compiles without one.")
    if backend == "neuron":
        cpu, why_cpu = use_cpu_backend("auto", facts)
        out.append(f"{'Tracing with cpu_backend=True' if cpu else 'Tracing on the device'}: {why_cpu}; "
                   f"{'device verification is skipped' if cpu else 'outputs are verified on the device'}.")
    elif backend == "cpu-check":
        out.append("To make NEFFs, install torch-neuronx and neuronx-cc from AWS's package index "
                   "(see the README's Neuron section).")
    runtime, why_run = choose_run_runtime(facts)
    out.append(f"`neffbench run` uses the {runtime} runtime: {why_run}.")
    if not facts.display:
        out.append("No display: the window cannot open here; `neffbench preview` renders plots to PNG instead.")
    if not facts.pyside6.found or not facts.pyqtgraph.found:
        out.append("The window needs PySide6-Essentials and pyqtgraph: run `make run` to install them.")
    return out
