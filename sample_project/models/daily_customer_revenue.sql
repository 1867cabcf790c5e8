{{ config(materialized='incremental_ivm') }}

-- Revenue per day and customer: an aggregate over another incremental_ivm model (a chain).
-- SUM/COUNT/AVG keep a running sum and count per group; COUNT(DISTINCT) keeps each group's
-- order ids with their weights.
select
    order_date,
    customer_id,
    count(*) as lines,
    count(distinct order_id) as orders,
    sum(line_amount) as revenue,
    avg(line_amount) as avg_line_amount
from {{ ref('order_lines_enriched') }}
group by order_date, customer_id
