{{ config(materialized='incremental_ivm') }}

-- Every non-cancelled order line with its order and product, and the line amount after discount.
select
    l.order_id,
    l.line_no,
    o.customer_id,
    o.order_date,
    o.status,
    p.product_id,
    p.name as product_name,
    p.category,
    l.quantity,
    p.unit_price,
    cast(l.quantity * p.unit_price * (1 - l.discount) as decimal(12, 2)) as line_amount
from {{ source('shop', 'order_lines') }} l
join {{ source('shop', 'orders') }} o on l.order_id = o.order_id
join {{ source('shop', 'products') }} p on l.product_id = p.product_id
where o.status <> 'cancelled'
  and l.quantity > 0
