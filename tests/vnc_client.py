"""A real VNC client for the tests: ``python -m tests.vnc_client PORT [OUT.png] [KEY]``, the password on stdin.

Connects to 127.0.0.1:PORT with vncdotool, saves the screen to OUT.png and presses KEY (``ctrl-q``).
Exit 0 when it did; 3 and ``REFUSED: ...`` on stdout when the server refused it.
"""

from __future__ import annotations

import sys
import warnings


def main(argv: list[str]) -> int:
    # vncdotool's DES for VNC authentication warns about where cryptography keeps TripleDES.
    warnings.simplefilter("ignore")
    from vncdotool import api
    from vncdotool.client import AuthenticationError

    port, out = argv[0], (argv[1] if len(argv) > 1 else "")
    key = argv[2] if len(argv) > 2 else None
    password = sys.stdin.readline().strip() or None
    client = api.connect(f"127.0.0.1::{port}", password=password, timeout=15)
    try:
        if out:
            client.captureScreen(out)
        else:
            client.refreshScreen()
        if key:
            client.keyPress(key)
    except AuthenticationError as exc:
        print(f"REFUSED: {exc}")
        api.shutdown()  # no disconnect: the failed connection never calls back, disconnect would wait
        return 3
    client.disconnect()
    api.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
