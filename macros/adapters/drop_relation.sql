{#--
  spark_ivm: drop tables with PURGE.

  With the embedded Iceberg SparkSessionCatalog (type=hive), a plain `DROP TABLE` on a managed
  parquet table leaves its files behind, so re-creating the table fails with
  LOCATION_ALREADY_EXISTS (apache/iceberg#11820); `DROP TABLE ... PURGE` removes them. Iceberg
  tables also need PURGE to delete their data and metadata files. On thrift/http/odbc targets the
  dbt-spark statement is kept unchanged for non-Iceberg tables (Delta tables may not support PURGE).
--#}
{% macro spark_ivm__drop_relation(relation) -%}
  {%- set purge = relation.type != 'view' and (target.method == 'session' or relation.is_iceberg) -%}
  {% call statement('drop_relation', auto_begin=False) -%}
    drop {{ relation.type }} if exists {{ relation }}{{ ' purge' if purge }}
  {%- endcall %}
{% endmacro %}
