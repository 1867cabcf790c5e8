{#--
  spark_ivm: `grants` on the embedded session.

  Spark SQL has no access control of its own: the session's Hive/Derby catalog refuses
  `SHOW GRANT` and `GRANT` ("Operation not allowed"), and the only principal is the process
  itself. dbt-spark's statements (written for Databricks) would make every model with `grants`
  fail after its table was written. With `method: session` the grants are not applied and each
  model that has some says so in a warning (which `--warn-error` turns into an error); on
  `thrift`/`http` dbt-spark's GRANT/REVOKE statements run unchanged (a server without SQL
  authorization refuses them).
--#}
{% macro spark_ivm__apply_grants(relation, grant_config, should_revoke=True) %}
  {%- if grant_config and target.method == 'session' -%}
    {% do exceptions.warn(
      "grants " ~ grant_config ~ " of " ~ relation.render() ~ " were not applied: the embedded Spark session "
      ~ "(method: session) has no access control (Spark SQL refuses GRANT); they are applied on thrift/http targets"
    ) %}
  {%- else -%}
    {% do default__apply_grants(relation, grant_config, should_revoke) %}
  {%- endif -%}
{% endmacro %}
