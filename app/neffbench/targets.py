"""Neuron targets as users name them (trn1, inf2, trn2) and the codenames NEFFs and the compiler carry (sunda, cayman).

The one place that knows both: the spec's target choices, the form, ``neffbench inspect``/``list``, the
Artifacts list and the run's host check all read it. It sits at the package's top level, not in
``neffbench.neff``, so that the spec can import it without importing the NEFF reader.
"""

from __future__ import annotations

# The values of neuronx-cc --target, as the spec offers them (and validation lists them).
FAMILIES = ("inf2", "trn1", "trn1n", "trn2", "trn3")

# The codename a NEFF's kelf-0.json gives as its target, by family. Inf2 and Trn1 share
# NeuronCore-v2 ("sunda"); Trn2 is NeuronCore-v3 ("cayman", as the real sample NEFF says).
# Listed in the order a codename's families are named: "trn1/inf2 (sunda)".
CODENAMES = {"trn1": "sunda", "trn1n": "sunda", "inf2": "sunda", "trn2": "cayman", "trn3": "mariana"}

# Codenames a NEFF written by the real compiler has been seen to carry. Trn3's comes from the compiler's
# naming alone: it is shown, but a NEFF is not refused for disagreeing with it.
CONFIRMED = frozenset({"sunda", "cayman"})

# Families that take --lnc (neuronx-cc documents it for Trn2 and later only).
LNC_FAMILIES = ("trn2", "trn3")

# Families that run int64 natively when told --native-int64=enabled (neuronx-cc 2.27+, SDK 2.32): "Only available
# on trn2 and later"; on the others int64 is always downcast to int32.
NATIVE_INT64_FAMILIES = ("trn2", "trn3")

# A variant shares its family's name in a codename's label: Trn1n is a Trn1 with more network.
_VARIANT_OF = {"trn1n": "trn1"}


def codename(family: str) -> str | None:
    """The codename a NEFF compiled for ``family`` carries; None for a family this table does not know."""
    return CODENAMES.get(family)


def confirmed_codename(family: str) -> str | None:
    """The codename only when a real NEFF has shown it: what a check may refuse a NEFF over."""
    name = CODENAMES.get(family)
    return name if name in CONFIRMED else None


def families_of(name: str) -> tuple[str, ...]:
    """Every family whose NEFFs carry codename ``name`` (empty for an unknown codename)."""
    return tuple(f for f, c in CODENAMES.items() if c == name)


def family_label(family: str) -> str:
    """``trn2 (cayman)``: a family as users name it, with its NEFFs' codename; the family alone when unknown."""
    name = codename(family)
    return f"{family} ({name})" if name else family


def codename_label(name: str | None) -> str:
    """``trn1/inf2 (sunda)``: what a NEFF's codename stands for; the codename alone when unknown."""
    if not name:
        return "unknown"
    families = [f for f in families_of(name) if f not in _VARIANT_OF]
    return f"{'/'.join(families)} ({name})" if families else name


def supports_lnc(family: str) -> bool:
    return family in LNC_FAMILIES


def supports_native_int64(family: str) -> bool:
    return family in NATIVE_INT64_FAMILIES
