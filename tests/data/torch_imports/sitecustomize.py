"""Put on PYTHONPATH by a test: every process that imports torch appends its command line to the file named by
NEFFBENCH_TEST_TORCH_IMPORTS, so the test counts the processes that paid for torch."""

import os
import sys


def _hook(event, args):
    if event == "import" and args[0] == "torch" and os.environ.get("NEFFBENCH_TEST_TORCH_IMPORTS"):
        with open(os.environ["NEFFBENCH_TEST_TORCH_IMPORTS"], "a", encoding="utf-8") as fh:
            fh.write(" ".join(sys.argv) + "\n")


sys.addaudithook(_hook)
