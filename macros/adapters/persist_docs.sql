{#--
  spark_ivm: persist_docs on incremental_ivm models.

  dbt-spark writes a relation's description only in the `comment` clause of the CREATE TABLE
  of the table and incremental materializations; an incremental_ivm target is created by the
  adapter (and re-created by every rebuild), so that clause never runs. Here, for
  incremental_ivm: one DESCRIBE TABLE EXTENDED reads the target's comments, and only those that
  differ from the model's descriptions are set: COMMENT ON TABLE and ALTER TABLE ... ALTER
  COLUMN ... COMMENT (each an Iceberg metadata commit, no snapshot: the model's state and what
  downstream models read are untouched). A run after which nothing differs (a noop, an
  incremental run) pays the DESCRIBE only. Other materializations keep dbt-spark's macro.
--#}
{% macro spark_ivm__persist_docs(relation, model, for_relation, for_columns) -%}
  {%- if model.config.materialized != 'incremental_ivm' -%}
    {% do return(spark__persist_docs(relation, model, for_relation, for_columns)) %}
  {%- endif -%}
  {%- set relation_doc = model.description if for_relation and config.persist_relation_docs() else '' -%}
  {%- set column_docs = model.columns if for_columns and config.persist_column_docs() else {} -%}
  {%- if not relation_doc and not column_docs -%}
    {% do return(none) %}
  {%- endif -%}

  {#- the target's comments: its column rows, then after a blank or '#' row the details -#}
  {%- set current = namespace(in_columns=true, table='') -%}
  {%- set column_comments = {} -%}
  {%- for row in get_columns_in_relation_raw(relation) -%}
    {%- if current.in_columns and (not row[0] or row[0].startswith('#')) -%}
      {%- set current.in_columns = false -%}
    {%- elif current.in_columns -%}
      {%- do column_comments.update({row[0] | lower: (row[0], row[2] or '')}) -%}
    {%- elif row[0] == 'Comment' -%}
      {%- set current.table = row[1] or '' -%}
    {%- endif -%}
  {%- endfor -%}

  {%- if relation_doc and relation_doc != current.table -%}
    {% do run_query("comment on table " ~ relation ~ " is " ~ spark_ivm__string_literal(relation_doc)) %}
  {%- endif -%}
  {%- set missing = [] -%}
  {%- for name, column in column_docs.items() if column.description -%}
    {%- set found = column_comments.get(name | lower) -%}
    {%- if not found -%}
      {%- do missing.append(name) -%}
    {%- elif found[1] != column.description -%}
      {% do run_query("alter table " ~ relation ~ " alter column " ~ adapter.quote(found[0]) ~ " comment "
                      ~ spark_ivm__string_literal(column.description)) %}
    {%- endif -%}
  {%- endfor -%}
  {%- if missing -%}
    {% do exceptions.warn("In relation " ~ relation.render() ~ ": the following documented columns are not in "
                          ~ "the table, their descriptions were not persisted: " ~ missing | join(", ")) %}
  {%- endif -%}
{%- endmacro %}

{#-- A Spark SQL string literal: backslashes and single quotes escaped. --#}
{% macro spark_ivm__string_literal(text) -%}
  {{- "'" ~ text | replace('\\', '\\\\') | replace("'", "\\'") ~ "'" -}}
{%- endmacro %}
