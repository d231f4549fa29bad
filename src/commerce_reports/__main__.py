"""`python -m commerce_reports ...` is the `commerce-reports` command."""

import sys

try:
    from .cli import main
except KeyboardInterrupt:  # Ctrl-C before the command could even start
    sys.exit(130)

sys.exit(main())
