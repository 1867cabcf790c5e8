"""ivm_core: the incremental view maintenance compiler of dbt-spark-ivm (pure Python).

``compiler.compile_model(sql, inputs)`` parses and qualifies a model's Spark SQL (``analyzer``),
builds a relational plan (``plan``), derives the plan of its change with one DBSP delta rule per
operator (``rules/``; aggregation is the package ``rules/aggregate/``, with one module per
aggregate function), and renders Spark SQL for it (``sqlgen``, ``rules/aggregate/sql``); the
refresh's other statements are ``statements``, and the SQL primitives all of them share are
``sqltext``. ``zset`` evaluates plans on in-memory Z-sets, running the rules, for the property
tests. Nothing here imports pyspark or dbt.
"""
