"""Run every benchmark module in this package (``bench_*.py``), or the ones named on the command line.

Each module defines ``run() -> list[str]``, returning the Markdown lines it reports.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys

import tests.bench as package


def main(argv: list[str]) -> int:
    names = sorted(m.name for m in pkgutil.iter_modules(package.__path__) if m.name.startswith("bench_"))
    wanted = [a for a in argv if not a.startswith("-")]
    if wanted:
        names = [n for n in names if any(w in n for w in wanted)]
    for name in names:
        module = importlib.import_module(f"tests.bench.{name}")
        print(f"\n## {name[len('bench_') :]}\n", flush=True)
        for line in module.run():
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
