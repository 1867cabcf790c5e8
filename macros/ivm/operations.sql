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
