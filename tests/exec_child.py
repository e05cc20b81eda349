"""``python -m tests.exec_child CODE [ARGS]``: runs CODE as ``python -c`` would, from a module, so that a test can
start it through the warm-start server (which forks ``python -m`` workers only)."""

import sys

if __name__ == "__main__":
    code = sys.argv.pop(1)
    exec(compile(code, "<exec_child>", "exec"), {"__name__": "__main__"})
