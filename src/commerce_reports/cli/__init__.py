"""The `commerce-reports` command: a thin shell over the package's public functions."""
