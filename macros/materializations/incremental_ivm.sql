{#
  incremental_ivm: the model is kept equal to its SQL by applying its inputs' changes.
  All the logic is in Python (adapter.ivm_refresh); this only wires dbt's contracts, hooks,
  on_schema_change, --empty, grants and docs, and drops a view that holds the target's name.
#}
{% materialization incremental_ivm, adapter='spark_ivm' %}
  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set grant_config = config.get('grants') -%}
  {%- set on_schema_change = incremental_validate_on_schema_change(config.get('on_schema_change'), default='ignore') -%}
  {%- set existing = load_cached_relation(this) -%}

  {{ run_hooks(pre_hooks, inside_transaction=False) }}
  {{ run_hooks(pre_hooks, inside_transaction=True) }}

  {%- if config.get('contract').enforced -%}
    {{ get_assert_columns_equivalent(sql) }}  {#- names and Spark types; fails before any write -#}
  {%- endif -%}
  {%- if on_schema_change == 'fail' and existing and not existing.is_view and not should_full_refresh() -%}
    {% do ivm_fail_on_schema_change(target_relation, sql) %}  {#- fails before any write -#}
  {%- endif -%}
  {%- if existing is not none and existing.is_view -%}
    {#- a model that was a view (or one `dbt clone` made a view of): the target takes its name, as
        dbt's table materialization does. Dropped only now, after the checks that fail before any write -#}
    {% do adapter.drop_relation(existing) %}
    {%- set existing = none -%}
  {%- endif -%}
  {%- set refresh_model = model -%}
  {%- if flags.EMPTY -%}
    {#- dbt run --empty reads every ref and source as `(select * from x where false limit 0)`: the
        model is rebuilt over those empty inputs under ivm_policy 'full' (the LIMIT would fail
        'incremental'); its next run without --empty rebuilds again, its SQL having changed -#}
    {%- set refresh_model = dict(model, config=dict(model.config, ivm_policy='full')) -%}
  {%- endif -%}
  {#- which models this invocation rebuilds after this one (a model it rebuilds reads none of
      this one's published changes) -#}
  {%- set response = adapter.ivm_refresh(refresh_model, graph, target_relation, should_full_refresh(),
                                         selected_resources, flags.FULL_REFRESH) -%}
  {% do store_result('main', response=response) %}

  {{ run_hooks(post_hooks, inside_transaction=True) }}

  {%- set should_revoke = should_revoke(existing, full_refresh_mode=(response.mode == 'full')) -%}
  {% do apply_grants(target_relation, grant_config, should_revoke=should_revoke) %}
  {% do persist_docs(target_relation, model) %}

  {{ run_hooks(post_hooks, inside_transaction=False) }}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
