{{ config(materialized='incremental_ivm') }}

-- Sales per product: MIN/MAX over dates, COUNT(DISTINCT) buyers, a FILTER clause and a HAVING.
-- A delete of a product's last sale on its first day moves min(first_sold) from stored state,
-- without reading the order lines again.
select
    p.product_id,
    p.name as product_name,
    p.category,
    sum(l.quantity) as units,
    count(distinct o.customer_id) as buyers,
    min(o.order_date) as first_sold,
    max(o.order_date) as last_sold,
    count(*) filter (where l.discount > 0) as discounted_lines
from {{ source('shop', 'order_lines') }} l
join {{ source('shop', 'orders') }} o on l.order_id = o.order_id
join {{ source('shop', 'products') }} p on l.product_id = p.product_id
where o.status <> 'cancelled'
group by p.product_id, p.name, p.category
having sum(l.quantity) >= 5
