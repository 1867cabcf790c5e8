{{ config(materialized='incremental_ivm') }}

-- Revenue per country and segment over the chain customer_order_lines (itself over
-- order_lines_enriched): three incremental_ivm models deep.
select
    country,
    segment,
    count(distinct customer_id) as customers,
    sum(line_amount) as revenue,
    max(line_amount) as largest_line
from {{ ref('customer_order_lines') }}
group by country, segment
