{#- Hand-written dbt `incremental` version of join_lines: recompute the lines touched since the last run
    (changed lines, lines of changed orders, lines of orders of changed customers) and MERGE them on
    (o_orderkey, l_linenumber); a touched line that no longer qualifies comes back with NULLs and the
    post-hook deletes it. -#}
{{ config(unique_key=['o_orderkey', 'l_linenumber'], post_hook="delete from {{ this }} where o_orderdate is null") }}
{% if is_incremental() %}
{% set wm = bench_watermark('join_lines_merge') %}
with touched_orders as (
    select o_orderkey as k from {{ source('tpch', 'orders_changes') }} where _ivm_seq > {{ wm }}
    union
    select o.o_orderkey as k
    from {{ source('tpch', 'orders') }} o
    join {{ source('tpch', 'customer_changes') }} cc on o.o_custkey = cc.c_custkey
    where cc._ivm_seq > {{ wm }}
),
touched as (
    select l_orderkey as k, l_linenumber as ln from {{ source('tpch', 'lineitem_changes') }} where _ivm_seq > {{ wm }}
    union
    select l.l_orderkey as k, l.l_linenumber as ln
    from {{ source('tpch', 'lineitem') }} l
    join touched_orders t on l.l_orderkey = t.k
),
fresh as (
    select
        o.o_orderkey,
        l.l_linenumber,
        o.o_orderdate,
        c.c_name,
        c.c_mktsegment,
        l.l_partkey,
        l.l_quantity,
        l.l_extendedprice * (1 - l.l_discount) as net_price
    from {{ source('tpch', 'orders') }} o
    join {{ source('tpch', 'customer') }} c on o.o_custkey = c.c_custkey
    join {{ source('tpch', 'lineitem') }} l on l.l_orderkey = o.o_orderkey
    where o.o_orderstatus = 'O'
      and l.l_orderkey in (select k from touched)
)
select t.k as o_orderkey, t.ln as l_linenumber, f.o_orderdate, f.c_name, f.c_mktsegment,
       f.l_partkey, f.l_quantity, f.net_price
from touched t
left join fresh f on f.o_orderkey = t.k and f.l_linenumber = t.ln
{% else %}
{{ bench_join_lines() }}
{% endif %}
