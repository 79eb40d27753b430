"""`python -m pinky.hooks <event>`: the same as the `pinky-hooks` console script."""

import sys

from pinky.hooks.dispatch import main

sys.exit(main())
