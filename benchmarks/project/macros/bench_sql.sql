{#-
  The benchmark queries, one macro each, so an incremental_ivm model and its `table` twin compile to
  exactly the same SQL. TPC-H Q1/Q3/Q5 variants in Spark SQL (DATE literals, no LIMIT/ORDER BY, which a
  table has no use for and the IVM does not maintain).
-#}

{# A TPC-H table of the source `src` — or, for src 'staging', the staging `view` model over the
   tables read through their Iceberg snapshots (`models/staging/`), as dbt projects read raw tables. #}
{% macro bench_rel(src, table) -%}
{%- if src == 'staging' -%}{{ ref('stg_' ~ table) }}{%- else -%}{{ source(src, table) }}{%- endif -%}
{%- endmacro %}

{# Single-table aggregate: TPC-H Q1 (pricing summary report). #}
{% macro bench_q1_agg(src='tpch') %}
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
from {{ bench_rel(src, 'lineitem') }}
where l_shipdate <= date '1998-09-02'
group by l_returnflag, l_linestatus
{% endmacro %}

{# TPC-H Q1 with subtotals: GROUP BY ROLLUP — the groups, a total per return flag and a grand total. #}
{% macro bench_q1_rollup(src='tpch') %}
select
    l_returnflag,
    l_linestatus,
    grouping_id() as level,
    sum(l_quantity) as sum_qty,
    sum(l_extendedprice * (1 - l_discount)) as sum_disc_price,
    avg(l_discount) as avg_disc,
    count(*) as count_order
from {{ bench_rel(src, 'lineitem') }}
where l_shipdate <= date '1998-09-02'
group by rollup(l_returnflag, l_linestatus)
{% endmacro %}

{# 3-way join + aggregate: TPC-H Q3 (shipping priority), one row per unshipped order. #}
{% macro bench_q3_join_agg(src='tpch') %}
select
    l.l_orderkey,
    o.o_orderdate,
    o.o_shippriority,
    sum(l.l_extendedprice * (1 - l.l_discount)) as revenue,
    count(*) as n_lines
from {{ bench_rel(src, 'customer') }} c
join {{ bench_rel(src, 'orders') }} o on c.c_custkey = o.o_custkey
join {{ bench_rel(src, 'lineitem') }} l on l.l_orderkey = o.o_orderkey
where c.c_mktsegment = 'BUILDING'
  and o.o_orderdate < date '1995-03-15'
  and l.l_shipdate > date '1995-03-15'
group by l.l_orderkey, o.o_orderdate, o.o_shippriority
{% endmacro %}

{# TPC-H Q3 as written, with its top 10: LIMIT is not maintained, so the incremental_ivm model falls
   back to a full recompute on every run (ivm_policy: auto) - what a fallback costs against its twin. #}
{% macro bench_q3_top10() %}
select * from ({{ bench_q3_join_agg() }}) as q3
order by revenue desc, o_orderdate, l_orderkey
limit 10
{% endmacro %}

{# 6-way join + aggregate: TPC-H Q5 (local supplier volume), revenue per nation of one region. #}
{% macro bench_q5_join_agg() %}
select
    n.n_name,
    sum(l.l_extendedprice * (1 - l.l_discount)) as revenue,
    count(*) as n_lines
from {{ source('tpch', 'customer') }} c
join {{ source('tpch', 'orders') }} o on c.c_custkey = o.o_custkey
join {{ source('tpch', 'lineitem') }} l on l.l_orderkey = o.o_orderkey
join {{ source('tpch', 'supplier') }} s on l.l_suppkey = s.s_suppkey and c.c_nationkey = s.s_nationkey
join {{ source('tpch', 'nation') }} n on s.s_nationkey = n.n_nationkey
join {{ source('tpch', 'region') }} r on n.n_regionkey = r.r_regionkey
where r.r_name = 'ASIA'
  and o.o_orderdate >= date '1994-01-01'
  and o.o_orderdate < date '1995-01-01'
group by n.n_name
{% endmacro %}

{# Join without aggregation: the open orders' lines with their customer (3-way, projection + filter). #}
{% macro bench_join_lines(src='tpch') %}
select
    o.o_orderkey,
    l.l_linenumber,
    o.o_orderdate,
    c.c_name,
    c.c_mktsegment,
    l.l_partkey,
    l.l_quantity,
    l.l_extendedprice * (1 - l.l_discount) as net_price
from {{ bench_rel(src, 'orders') }} o
join {{ bench_rel(src, 'customer') }} c on o.o_custkey = c.c_custkey
join {{ bench_rel(src, 'lineitem') }} l on l.l_orderkey = o.o_orderkey
where o.o_orderstatus = 'O'
{% endmacro %}

{# DISTINCT over the big table: which supplier ships by which mode since 1997. #}
{% macro bench_distinct_ship() %}
select distinct l_suppkey, l_shipmode, l_returnflag
from {{ source('tpch', 'lineitem') }}
where l_shipdate >= date '1997-01-01'
{% endmacro %}

{# Chain, stage 1: one row per order with its net value (join + aggregate over orders x lineitem). #}
{% macro bench_chain_orders() %}
select
    o.o_orderkey,
    o.o_custkey,
    o.o_orderdate,
    sum(l.l_extendedprice * (1 - l.l_discount)) as net_value,
    count(*) as n_lines
from {{ source('tpch', 'orders') }} o
join {{ source('tpch', 'lineitem') }} l on l.l_orderkey = o.o_orderkey
group by o.o_orderkey, o.o_custkey, o.o_orderdate
{% endmacro %}

{# Chain, stage 2: reads stage 1 (`upstream`) and customer: per market segment and year. #}
{% macro bench_chain_segments(upstream) %}
select
    c.c_mktsegment,
    year(ov.o_orderdate) as order_year,
    count(*) as n_orders,
    sum(ov.net_value) as revenue,
    max(ov.n_lines) as max_lines,
    count(distinct ov.o_custkey) as n_customers
from {{ upstream }} ov
join {{ source('tpch', 'customer') }} c on ov.o_custkey = c.c_custkey
group by c.c_mktsegment, year(ov.o_orderdate)
{% endmacro %}

{# The hand-written models' watermark: the highest _ivm_seq they have already consumed. #}
{% macro bench_watermark(model_name) %}
(select coalesce(max(seq), 0) from {{ source('bench_ctl', 'watermarks') }} where model = '{{ model_name }}')
{% endmacro %}

{# dbt's dedup pattern, a window function: each customer's latest order (row_number() … = 1). #}
{% macro bench_latest_order(src='tpch') %}
select o_custkey, o_orderkey, o_orderdate, o_totalprice, o_orderstatus
from (
    select
        o.o_custkey, o.o_orderkey, o.o_orderdate, o.o_totalprice, o.o_orderstatus,
        row_number() over (partition by o.o_custkey order by o.o_orderdate desc, o.o_orderkey desc) as rn
    from {{ bench_rel(src, 'orders') }} o
) latest
where rn = 1
{% endmacro %}

{# A subquery under a join + aggregate: TPC-H Q18 (large volume customers) without its top 100 -
   the orders whose lines sum to more than 300 (an IN over an aggregate of lineitem), with their
   customer and quantity: two aggregates, one feeding the other's join. #}
{% macro bench_q18_large_orders(src='tpch') %}
select
    c.c_name,
    c.c_custkey,
    o.o_orderkey,
    o.o_orderdate,
    o.o_totalprice,
    sum(l.l_quantity) as total_qty
from {{ bench_rel(src, 'customer') }} c
join {{ bench_rel(src, 'orders') }} o on c.c_custkey = o.o_custkey
join {{ bench_rel(src, 'lineitem') }} l on o.o_orderkey = l.l_orderkey
where o.o_orderkey in (
    select l_orderkey from {{ bench_rel(src, 'lineitem') }} group by l_orderkey having sum(l_quantity) > 300
)
group by c.c_name, c.c_custkey, o.o_orderkey, o.o_orderdate, o.o_totalprice
{% endmacro %}

{# Revenue per order: orders joined with their lines, one group per order (1.5 M at SF 1) - a
   large aggregate state updated in place, which a TPC-H refresh batch touches through both
   inputs (new and deleted orders with their lines). #}
{% macro bench_order_revenue(src='tpch') %}
select
    o.o_orderkey,
    o.o_custkey,
    o.o_orderdate,
    count(*) as line_count,
    sum(l.l_extendedprice * (1 - l.l_discount)) as revenue
from {{ bench_rel(src, 'orders') }} o
join {{ bench_rel(src, 'lineitem') }} l on l.l_orderkey = o.o_orderkey
group by o.o_orderkey, o.o_custkey, o.o_orderdate
{% endmacro %}
