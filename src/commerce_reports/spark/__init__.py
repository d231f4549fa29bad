"""The same lake and the same views on Apache Spark, for lakes that outgrow one machine.

    from pyspark.sql import SparkSession
    from commerce_reports.spark import register_views

    spark = SparkSession.builder.getOrCreate()
    register_views(spark, "data")                 # every view, as a temporary view
    spark.sql("SELECT * FROM site_performance").show()

The views read the lake as its last writer published it when `register_views` is called, and
keep reading that state: call it again after a sync. A query that fails with Spark's
`FAILED_READ_FILE.FILE_NOT_EXIST` (a generation pruned a day after two newer ones, or, with no
generation to trust, a lake file a sync replaced or `verify` quarantined) needs the same:
`REFRESH TABLE`, which Spark advises, does nothing for these temporary views.

Needs the optional extra (`pip install 'commerce-reports[spark]'`) and a Java runtime; importing
this package does not, so the error says how to get them.
"""

from __future__ import annotations

from .register import INSTALL_HINT, register_views

__all__ = ["INSTALL_HINT", "register_views"]
