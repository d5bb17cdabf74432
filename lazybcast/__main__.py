"""``python -m lazybcast``: see ``lazybcast._cli``."""

import sys

from lazybcast._cli import main

sys.exit(main())
