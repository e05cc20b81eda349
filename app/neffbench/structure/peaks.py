"""The documented peak compute of one (logical) NeuronCore, by target: what a layer's achieved FLOP/s is set against.

Per chip, from aws-neuron-sdk ``about-neuron/arch/neuron-hardware/``:

- ``inferentia2.rst``: two NeuronCore-v2, "190 FP16/BF16/cFP8/TF32 TFLOPS, and 47.5 FP32 TFLOPS";
- ``trainium.rst`` (Trn1, Trn1n): two NeuronCore-v2, the same 190 and 47.5 TFLOPS;
- ``trainium2.rst``: eight NeuronCore-v3, "667 BF16/FP16/TF32 TFLOPS", "181 FP32 TFLOPS";
- ``trainium3.rst``: eight NeuronCore-v4, "671 BF16/FP16/TF32 TFLOPS", "183 FP32 TFLOPS".

A NEFF runs on one logical NeuronCore: the chip's figure over its physical cores, times the LNC (Trn2 and later
group ``lnc`` physical cores into one). These are dense peaks; float32 work is set against the FP32 figure.
"""

from __future__ import annotations

from dataclasses import dataclass

# target: (physical NeuronCores per chip, dense 16-bit TFLOPS per chip, FP32 TFLOPS per chip, the page)
CHIPS: dict[str, tuple[int, float, float, str]] = {
    "inf2": (2, 190.0, 47.5, "about-neuron/arch/neuron-hardware/inferentia2.rst"),
    "trn1": (2, 190.0, 47.5, "about-neuron/arch/neuron-hardware/trainium.rst"),
    "trn1n": (2, 190.0, 47.5, "about-neuron/arch/neuron-hardware/trainium.rst"),
    "trn2": (8, 667.0, 181.0, "about-neuron/arch/neuron-hardware/trainium2.rst"),
    "trn3": (8, 671.0, 183.0, "about-neuron/arch/neuron-hardware/trainium3.rst"),
}


@dataclass(frozen=True)
class Peak:
    flops_per_s: float
    what: str  # "trn2 (LNC 2), BF16/FP16" and the page it comes from

    def share(self, achieved: float) -> float:
        return achieved / self.flops_per_s


def peak(target: str | None, lnc: int | None, dtype: str | None) -> Peak | None:
    """The peak of one logical NeuronCore of ``target`` for work in ``dtype``; None for a target not listed."""
    chip = CHIPS.get(target or "")
    if chip is None:
        return None
    cores, half, single, page = chip
    lnc = max(1, lnc or 1) if cores > 2 else 1  # logical NeuronCores begin with Trainium2
    per_core = lnc / cores
    fp32 = dtype in ("float32", "float64")
    tflops = (single if fp32 else half) * per_core
    kind = "FP32" if fp32 else "BF16/FP16"
    return Peak(tflops * 1e12, f"{target} (LNC {lnc}), {kind}: {tflops:g} TFLOPS per logical core ({page})")
