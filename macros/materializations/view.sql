{#
  view: built under an intermediate name, then swapped in, instead of dbt-spark's
  `create or replace view`.

  With Iceberg's SparkSessionCatalog over a Hive metastore (the embedded default, and any cluster
  configured that way) `create or replace view` of an existing Iceberg view writes the new view
  version but leaves the metastore's view text as it was, and Spark expands a view from that text
  (apache/iceberg#15490): every later query of the view ran its FIRST SQL, whatever the model
  says now. A view created anew has the right text, so the new SQL is created as
  `<name>__dbt_tmp` (a mistake in it fails here, the old view untouched), the old view dropped and
  the new one renamed into its place.
#}
{% materialization view, adapter='spark_ivm' -%}
  {%- set existing = load_cached_relation(this) -%}
  {%- set target_relation = this.incorporate(type='view') -%}
  {%- set intermediate_relation = make_intermediate_relation(target_relation) -%}
  {%- set grant_config = config.get('grants') -%}

  {{ run_hooks(pre_hooks) }}

  {%- if existing is not none and existing.is_table -%}
    {{ handle_existing_table(should_full_refresh(), existing) }}
  {%- endif -%}
  {{ adapter.drop_relation(intermediate_relation) }}  {#- left by a run killed before its swap -#}

  {% call statement('main') -%}
    {{ get_create_view_as_sql(intermediate_relation, sql) }}
  {%- endcall %}
  {%- if existing is not none and existing.is_view -%}
    {{ adapter.drop_relation(existing) }}
  {%- endif -%}
  {{ adapter.rename_relation(intermediate_relation, target_relation) }}

  {%- set should_revoke = should_revoke(existing is not none and existing.is_view, full_refresh_mode=True) -%}
  {% do apply_grants(target_relation, grant_config, should_revoke=should_revoke) %}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [target_relation]}) }}
{%- endmaterialization %}
