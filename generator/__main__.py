"""`python -m generator …`: user mistakes end as one line on stderr and exit status 2."""

import sys

from generator.cli.main import main
from generator.measure import own_process

if __name__ == "__main__":
    own_process()  # this process is the tool's own: its imports' objects are frozen
    sys.exit(main())
