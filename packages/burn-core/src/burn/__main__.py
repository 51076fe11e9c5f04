"""``python -m burn``: the ``burn`` command (see `burn.cli`)."""

import sys

from burn.cli import main

sys.exit(main())
