{#- Hand-written dbt `incremental` version of q1_agg: recompute only the (returnflag, linestatus) groups that
    appear in lineitem's changes since the last run, MERGE them on the group key. Groups never vanish here. -#}
{{ config(unique_key=['l_returnflag', 'l_linestatus']) }}
select
    l_returnflag,
    l_linestatus,
    sum(l_quantity) as sum_qty,
    sum(l_extendedprice) as sum_base_price,
    sum(l_extendedprice * (1 - l_discount)) as sum_disc_price,
    sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) as sum_charge,
    avg(l_quantity) as avg_qty,
    avg(l_extendedprice) as avg_price,
    avg(l_discount) as avg_disc,
    count(*) as count_order
from {{ source('tpch', 'lineitem') }}
where l_shipdate <= date '1998-09-02'
{% if is_incremental() %}
  and (l_returnflag, l_linestatus) in (
      select l_returnflag, l_linestatus from {{ source('tpch', 'lineitem_changes') }}
      where _ivm_seq > {{ bench_watermark('q1_agg_merge') }})
{% endif %}
group by l_returnflag, l_linestatus
