"""commerce-reports: affiliate commerce reports, local, current, correct and fast to look at."""

__version__ = "0.1.0"
