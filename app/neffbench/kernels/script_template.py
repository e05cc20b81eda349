"""Scripts written from templates: plain Python files whose placeholders a job's values fill (``reproduce.py``).

A template lives in a ``templates/`` folder beside the code that fills it. The folder is no package (nothing imports
a template), and ruff checks the files as the code around them. Each placeholder is valid Python where it stands:

``${name}``       inside a docstring or a comment: the value's text;
``"${name}"``     a string literal holding nothing else: the value as a Python literal (its ``repr``);
``#: ${name}``    a line holding nothing else: the value's text in place of the line (code, comments or nothing).

Braces are the script's own, never doubled. A template and its caller that disagree (a placeholder without a value,
a value without a placeholder) raise ``TemplateError`` naming them, so neither can drift from the other unseen.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

_PLACEHOLDER = re.compile(r'^#: \$\{(\w+)\}$|"\$\{(\w+)\}"|\$\{(\w+)\}', re.MULTILINE)


class TemplateError(ValueError):
    """A template whose placeholders are not the values given to it."""


def fill(template: Path, **values: Any) -> str:
    """The text of ``template`` with each placeholder replaced by its value."""
    text = template.read_text(encoding="utf-8")
    wanted: set[str] = set()

    def replace(match: re.Match[str]) -> str:
        line, literal, inline = match.groups()
        name = line or literal or inline
        wanted.add(name)
        if name not in values:
            return match.group(0)
        return repr(values[name]) if literal else str(values[name])

    filled = _PLACEHOLDER.sub(replace, text)
    missing, unused = sorted(wanted - set(values)), sorted(set(values) - wanted)
    if missing or unused:
        said = [f"no value for {', '.join(missing)}"] if missing else []
        said += [f"no placeholder for {', '.join(unused)}"] if unused else []
        raise TemplateError(f"{template.name}: {'; '.join(said)}.")
    return filled
