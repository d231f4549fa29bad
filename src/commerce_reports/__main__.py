"""`python -m commerce_reports ...` is the `commerce-reports` command."""

import sys

from .cli import main

sys.exit(main())
