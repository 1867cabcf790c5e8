{{ config(materialized='incremental_ivm') }}

-- Star join around the order lines: what VIP customers buy, and where.
with vip as (
    select customer_id, name, country
    from {{ source('shop', 'customers') }}
    where segment = 'vip'
)
select
    v.customer_id,
    v.name as customer_name,
    v.country,
    o.order_id,
    o.channel,
    p.product_id,
    p.name as product_name,
    p.category,
    l.quantity
from {{ source('shop', 'order_lines') }} l
join {{ source('shop', 'orders') }} o on l.order_id = o.order_id
join vip v on o.customer_id = v.customer_id
join {{ source('shop', 'products') }} p on l.product_id = p.product_id
where p.active
