"""ivm_core: the incremental view maintenance compiler of dbt-spark-ivm (pure Python).

``compiler.compile_model(sql, inputs)`` parses and qualifies a model's Spark SQL (``analyzer``),
builds a relational plan (``plan``), derives the plan of its change with one DBSP delta rule per
operator (``rules/``), and renders Spark SQL for it (``sqlgen``, ``aggregates``, ``statements``).
``zset`` evaluates plans on in-memory Z-sets, the reference of the property tests. Nothing here
imports pyspark or dbt.
"""
