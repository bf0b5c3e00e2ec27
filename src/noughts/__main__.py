"""``python -m noughts``: the same as the ``noughts`` command."""

import sys

from noughts.cli import main

if __name__ == "__main__":
    sys.exit(main())
