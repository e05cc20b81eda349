"""``python -m neffbench.probe resolve|check``: see :mod:`neffbench.probe.child`."""

import os
import sys

from neffbench.probe.child import main

if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    os._exit(code)  # skip torch's interpreter teardown: the report is written
