{{ config(materialized='incremental_ivm') }}

-- A chain: the enriched lines (another incremental_ivm model) with their customer.
select
    e.order_id,
    e.line_no,
    c.customer_id,
    c.name as customer_name,
    c.country,
    c.segment,
    e.product_name,
    e.line_amount
from {{ ref('order_lines_enriched') }} e
join {{ source('shop', 'customers') }} c on e.customer_id = c.customer_id
