"""``python -m ambppl``: the same as the ``ambppl`` command."""

import sys

from ambppl.cli import main

if __name__ == "__main__":
    sys.exit(main())
