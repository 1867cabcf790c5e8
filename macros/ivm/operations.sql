{#- dbt run-operation ivm_explain --args '{model: nation_revenue}' (SPEC §6) -#}
{% macro ivm_explain(model) %}
  {%- if execute -%}
    {{ log(adapter.ivm_explain(model, graph), info=True) }}
  {%- endif -%}
{% endmacro %}

{#- dbt run-operation ivm_check --args '{model: nation_revenue}': verifies the state store
    (join indexes, aggregate state) and the target against their definitions; fails on drift. -#}
{% macro ivm_check(model) %}
  {%- if execute -%}
    {{ log(adapter.ivm_check(model, graph), info=True) }}
  {%- endif -%}
{% endmacro %}

{#- dbt run-operation ivm_status [--args '{models: [a, b], max_lag_seconds: 600, format: json}'] (SPEC §6b):
    per incremental_ivm model its last run, whether a run holds it, its state's size and each
    input's consumed vs available commits and lag; fails when a lag exceeds max_lag_seconds. -#}
{% macro ivm_status(models=none, max_lag_seconds=none, format='text') %}
  {%- if execute -%}
    {{ print(adapter.ivm_status(graph, models, max_lag_seconds, format)) }}
  {%- endif -%}
{% endmacro %}
