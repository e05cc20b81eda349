"""Fields the current values make irrelevant, and why: what the form disables and spec files mark.

Two kinds, both keyed ``section.name`` (or ``name`` for a top field) with a reason a user reads:

- *inactive* fields, which a choice in their section does not reveal (``ui(reveals=...)``): the form
  hides them, validation skips them and the hash leaves them out;
- *ignored* fields, active but made irrelevant by another value: the compiler's rules here, which
  hold for every kernel, and each kernel's own (``Kernel.ignored_fields``). The form shows them
  disabled, with the reason.
"""

from __future__ import annotations

import json
from typing import Any

from neffbench.kernels import registry
from neffbench.schema.compiler import compiler_ignored
from neffbench.schema.fields import fields_of, is_active, sections_of


def _toml_value(value: Any) -> str:
    # Strings quoted and booleans lower-case, as the spec file spells them.
    return json.dumps(value)


def inactive_fields(spec: Any) -> dict[str, str]:
    """Fields no choice reveals, with the choice that hides them: ``rope_type is "default"; only ...``."""
    out: dict[str, str] = {}
    for section in sections_of(spec):
        sect = getattr(spec, section)
        fields = fields_of(spec, section)
        for f in fields:
            if is_active(spec, section, f.name):
                continue
            # The first field whose reveals name it decides, as in is_active.
            control = next(
                c
                for c in fields
                if f.name in {n for names in (c.metadata.get("reveals") or {}).values() for n in names}
            )
            users = [choice for choice, names in control.metadata["reveals"].items() if f.name in names]
            out[f"{section}.{f.name}"] = (
                f"{control.name} is {_toml_value(getattr(sect, control.name))}; "
                f"only {', '.join(users)} use{'s' if len(users) == 1 else ''} it"
            )
    return out


def ignored_fields(spec: Any) -> dict[str, str]:
    """Active fields the other values make irrelevant (inactive ones are not repeated here)."""
    out = compiler_ignored(spec)
    out.update(registry.for_spec(spec).ignored_fields(spec))
    inactive = inactive_fields(spec)
    return {key: reason for key, reason in out.items() if key not in inactive}


def all_ignored(spec: Any) -> dict[str, str]:
    """Inactive and ignored fields together: what a spec file marks when they hold a value of their own."""
    return {**inactive_fields(spec), **ignored_fields(spec)}
