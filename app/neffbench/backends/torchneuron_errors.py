"""Why a torchneuron compile failed, in one sentence: the compiler's exit code and first error, the user's
line a graph break is at, a host without a Trainium device.

TorchNeuron runs neuronx-cc itself with its output captured; on a failure it raises ``StableHLO to NEFF
compilation failed for torch.compile: Command failed (neuronx-cc compilation) with exit code N: <stderr>``,
which dynamo wraps in ``BackendCompilerFailed``. It reads only the exit *code*, so a compiler killed by a
signal ends as ``Failed to read compiled NEFF file``. Under ``fullgraph=True`` a graph break is dynamo's
``Unsupported`` with a ``from user code:`` block of frames, innermost last.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from neffbench.compilerlog.exits import meaning
from neffbench.compilerlog.reader import CompilerLog

_STABLEHLO_RE = re.compile(
    r"StableHLO to NEFF compilation failed[^\n]*? with exit code (?P<code>-?\d+)"
    r"(?::[ \t]*(?P<stderr>.*))?",
    re.S,
)
_NO_NEFF_RE = re.compile(r"Failed to read compiled NEFF file")
_NO_DEVICE_RE = re.compile(r"No Neuron devices? (?:are )?(?:available|found)", re.I)
_FRAME_RE = re.compile(
    r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<fn>[^\n]+)'
    r'(?:\n(?P<src>(?!\s*File ")[^\n]*))?',
    re.M,
)


def no_device(version: str | None) -> str:
    return (
        f"TorchNeuron (torch-neuronx {version or '?'}) compiles only on a Trn2 or Trn3 instance, and this host "
        "has no Neuron device: run the compile there (for Inf2/Trn1, the legacy neuron backend of torch-neuronx "
        "2.9 and earlier compiles without a device)"
    )


def exception_text(exc: BaseException) -> str:
    """Every message in the chain (dynamo's wrapper, its inner exception, causes), outermost first."""
    seen: set[int] = set()
    texts: list[str] = []
    todo: list[BaseException | None] = [exc]
    while todo:
        e = todo.pop(0)
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        texts.append(f"{type(e).__name__}: {e}")
        todo += [getattr(e, "inner_exception", None), e.__cause__, e.__context__]
    return "\n".join(texts)


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0] if lines else ""


def compile_failure(text: str, compiler_log: Iterable[str] = (), version: str | None = None) -> str | None:
    """The sentence for a failure TorchNeuron reported, or None when ``text`` is none of its forms.

    ``compiler_log`` is the compiler's own log, when the job had it written (its first error beats the
    captured stderr, which the exception carries only in part).
    """
    m = _STABLEHLO_RE.search(text)
    if m:
        code = int(m["code"])
        reader = CompilerLog(dedup=False)
        for line in compiler_log:
            reader.feed(line)
        for line in (m["stderr"] or "").splitlines():
            reader.feed(line)
        first = reader.first_error
        cause = f": {_first_line(first.message)}" if first is not None and first.message.strip() else ""
        return f"neuronx-cc exited with code {code} under TorchNeuron ({meaning(code)}){cause}"
    if _NO_NEFF_RE.search(text):
        return (
            "neuronx-cc ended without writing a NEFF under TorchNeuron (Failed to read compiled NEFF file): "
            "TorchNeuron reads only the compiler's exit code, so a compiler killed by a signal, most often the "
            "out-of-memory killer, ends like this"
        )
    if _NO_DEVICE_RE.search(text):
        return no_device(version)
    return None


def _library(path: str, roots: tuple[Path, ...]) -> bool:
    if path.startswith("<"):
        return True  # generated code (neffbench's module wrapper, an exec'd string): never the user's line
    try:
        resolved = Path(path).resolve()
    except (OSError, RuntimeError):
        return False
    return any(resolved.is_relative_to(root) for root in roots)


def graph_break(text: str, library_roots: tuple[Path, ...] = ()) -> str:
    """``graph break under fullgraph=True at FILE:LINE in FN (`source`): reason``, the frame being the
    innermost one outside ``library_roots`` (neffbench's wrappers, torch), else the innermost."""
    from neffbench.backends.tracing import source_location

    reason = _first_line(text.split("from user code:", 1)[0]) or "dynamo could not trace the module as one graph"
    frames = list(_FRAME_RE.finditer(text.split("from user code:", 1)[1])) if "from user code:" in text else []
    if not frames:
        return f"graph break under fullgraph=True: {reason}"
    mine = [f for f in frames if not _library(f["file"], library_roots)]
    frame = (mine or frames)[-1]
    source = (frame["src"] or "").split("  #")[0].strip()
    code = f" (`{source}`)" if source else ""
    return (
        f"graph break under fullgraph=True at {source_location(frame['file'], int(frame['line']))} in "
        f"{frame['fn'].strip()}{code}: {reason}; TorchNeuron compiles the module as one graph, so that line "
        "must change (torch's explanation and hints are in job.log)"
    )
