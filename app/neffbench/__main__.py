"""``python -m neffbench`` is the ``neffbench`` command."""

import sys

from neffbench.cli.main import main

sys.exit(main())
