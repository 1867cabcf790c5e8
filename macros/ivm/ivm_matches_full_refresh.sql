{#
  Generic test (SPEC §5): recomputes the model's SQL from scratch and lists every row whose
  multiplicity differs between the model and the recompute (target_count, full_refresh_count).
#}
{% test ivm_matches_full_refresh(model) %}
  {%- if execute -%}
    {{ adapter.ivm_correctness_sql(model) }}
  {%- else -%}
    select 1 as placeholder where false
  {%- endif -%}
{% endtest %}
