"""``python -m multigrove``: the command line (``multigrove --help``)."""
import sys

from .cli import main

sys.exit(main())
