"""`python -m generator …`: user mistakes end as one line on stderr and exit status 2."""

import sys

from generator.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
