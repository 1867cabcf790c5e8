{#--
  spark_ivm: on_schema_change='sync_all_columns' on Iceberg tables.

  dbt-spark refuses to remove columns ("Iceberg does not support dropping columns from tables"),
  but Iceberg drops columns as a metadata change (its files keep the old column, unread), so a
  dbt `incremental` model stored as Iceberg (spark_ivm's default) drops the columns its SELECT
  no longer has, as dbt users know from other warehouses. Other formats keep dbt-spark's macro.
--#}
{% macro spark_ivm__alter_relation_add_remove_columns(relation, add_columns, remove_columns) %}
  {%- if remove_columns and relation.is_iceberg -%}
    {%- set sql -%}
      alter table {{ relation }} drop columns ({{ remove_columns | map(attribute='quoted') | join(', ') }})
    {%- endset -%}
    {% do run_query(sql) %}
    {%- set remove_columns = [] -%}
  {%- endif -%}
  {%- if add_columns or remove_columns -%}
    {% do spark__alter_relation_add_remove_columns(relation, add_columns, remove_columns) %}
  {%- endif -%}
{% endmacro %}
