"""The lake: report days and windows cached as Parquet partitions, with a manifest and syncs."""
