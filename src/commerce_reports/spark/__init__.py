"""The same lake and the same views on Apache Spark, for lakes that outgrow one machine.

    from pyspark.sql import SparkSession
    from commerce_reports.spark import register_views

    spark = SparkSession.builder.getOrCreate()
    register_views(spark, "data")                 # every view, as a temporary view
    spark.sql("SELECT * FROM site_performance").show()

Needs the optional extra (`pip install 'commerce-reports[spark]'`) and a Java runtime; importing
this package does not, so the error says how to get them.
"""

from __future__ import annotations

from .register import INSTALL_HINT, register_views

__all__ = ["INSTALL_HINT", "register_views"]
