{#- Hand-written dbt `incremental` version of q3_join_agg: recompute the orders touched since the last run
    (changed orders, orders of changed lines, orders of changed customers) and MERGE them on l_orderkey;
    a touched order that no longer qualifies comes back with NULLs and the post-hook deletes it. -#}
{{ config(unique_key='l_orderkey', post_hook="delete from {{ this }} where revenue is null") }}
{% if is_incremental() %}
{% set wm = bench_watermark('q3_join_agg_merge') %}
with touched as (
    select o_orderkey as k from {{ source('tpch', 'orders_changes') }} where _ivm_seq > {{ wm }}
    union
    select l_orderkey as k from {{ source('tpch', 'lineitem_changes') }} where _ivm_seq > {{ wm }}
    union
    select o.o_orderkey as k
    from {{ source('tpch', 'orders') }} o
    join {{ source('tpch', 'customer_changes') }} cc on o.o_custkey = cc.c_custkey
    where cc._ivm_seq > {{ wm }}
),
fresh as (
    select
        l.l_orderkey,
        o.o_orderdate,
        o.o_shippriority,
        sum(l.l_extendedprice * (1 - l.l_discount)) as revenue,
        count(*) as n_lines
    from {{ source('tpch', 'customer') }} c
    join {{ source('tpch', 'orders') }} o on c.c_custkey = o.o_custkey
    join {{ source('tpch', 'lineitem') }} l on l.l_orderkey = o.o_orderkey
    where c.c_mktsegment = 'BUILDING'
      and o.o_orderdate < date '1995-03-15'
      and l.l_shipdate > date '1995-03-15'
      and l.l_orderkey in (select k from touched)
    group by l.l_orderkey, o.o_orderdate, o.o_shippriority
)
select t.k as l_orderkey, f.o_orderdate, f.o_shippriority, f.revenue, f.n_lines
from touched t
left join fresh f on f.l_orderkey = t.k
{% else %}
{{ bench_q3_join_agg() }}
{% endif %}
