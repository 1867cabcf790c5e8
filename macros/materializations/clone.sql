{#
  clone (`dbt clone`): dbt-spark's refuses every file format but delta, whose `shallow clone` it
  runs. Iceberg has no zero-copy clone in Spark SQL, so a clone is a view of the relation in the
  --state environment, as dbt's default clone makes wherever tables cannot be cloned. A model
  that is an incremental_ivm one drops that view on its next run and builds its target.
#}
{% macro spark_ivm__can_clone_table() %}
  {{ return(False) }}
{% endmacro %}

{% materialization clone, adapter='spark_ivm' -%}
  {{ return(context['materialization_clone_default']()) }}
{%- endmaterialization %}
