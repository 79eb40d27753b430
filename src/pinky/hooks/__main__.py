"""`python -m pinky.hooks <event>`: the same as the `pinky-hooks` console script."""

import sys

from pinky.hooks import main

sys.exit(main())
