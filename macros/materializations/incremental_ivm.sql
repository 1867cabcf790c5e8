{#
  incremental_ivm: the model is kept equal to its SQL by applying its inputs' changes.
  All the logic is in Python (adapter.ivm_refresh); this only wires dbt's contracts, hooks, grants
  and docs.
#}
{% materialization incremental_ivm, adapter='spark_ivm' %}
  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set grant_config = config.get('grants') -%}

  {{ run_hooks(pre_hooks, inside_transaction=False) }}
  {{ run_hooks(pre_hooks, inside_transaction=True) }}

  {%- if config.get('contract').enforced -%}
    {{ get_assert_columns_equivalent(sql) }}  {#- names and Spark types; fails before any write -#}
  {%- endif -%}
  {%- set existing = load_cached_relation(this) -%}
  {%- set response = adapter.ivm_refresh(model, graph, target_relation, should_full_refresh()) -%}
  {% do store_result('main', response=response) %}

  {{ run_hooks(post_hooks, inside_transaction=True) }}

  {%- set should_revoke = should_revoke(existing, full_refresh_mode=(response.mode == 'full')) -%}
  {% do apply_grants(target_relation, grant_config, should_revoke=should_revoke) %}
  {% do persist_docs(target_relation, model) %}

  {{ run_hooks(post_hooks, inside_transaction=False) }}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
