{#--
  on_schema_change on incremental_ivm (called only when it is 'fail', on a target that exists,
  outside --full-refresh: other runs pay no statement for it). A changed SELECT always rebuilds
  the target with exactly the SELECT's columns; 'fail' stops the run instead, before the model's
  target and state are written, when the SELECT's column names or Spark types (DESCRIBE QUERY:
  metadata only) differ from the target's. As in dbt, the columns are compared by name: an
  order change alone is not a schema change.
--#}
{% macro ivm_fail_on_schema_change(relation, sql) %}
  {%- set target_types = {} -%}
  {%- for column in adapter.get_columns_in_relation(relation) -%}
    {%- do target_types.update({column.name: column.data_type}) -%}
  {%- endfor -%}
  {%- set select_types = {} -%}
  {%- for row in run_query('describe query ' ~ sql) -%}
    {%- do select_types.update({row[0]: row[1]}) -%}
  {%- endfor -%}
  {%- set differences = [] -%}
  {%- for name, type in select_types.items() -%}
    {%- if name not in target_types -%}
      {%- do differences.append('added ' ~ name ~ ' ' ~ type) -%}
    {%- elif target_types[name] != type -%}
      {%- do differences.append(name ~ ' ' ~ target_types[name] ~ ' -> ' ~ type) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- for name, type in target_types.items() if name not in select_types -%}
    {%- do differences.append('removed ' ~ name ~ ' ' ~ type) -%}
  {%- endfor -%}
  {%- if differences -%}
    {% do exceptions.raise_compiler_error(
      "incremental_ivm model '" ~ model.name ~ "' has on_schema_change 'fail' and its SELECT's columns differ "
      ~ "from its target " ~ relation.render() ~ ": " ~ differences | join('; ') ~ ". Nothing was written. "
      ~ "Set on_schema_change to ignore, append_new_columns or sync_all_columns to rebuild it with the new "
      ~ "columns, or run with --full-refresh."
    ) %}
  {%- endif -%}
{% endmacro %}
