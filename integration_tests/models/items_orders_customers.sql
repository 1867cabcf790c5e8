-- three-way join with an extra non-equi condition
select i.order_id, i.sku, i.qty, i.price, o.day, c.region
from {{ source('raw', 'items') }} i
join {{ source('raw', 'orders') }} o on i.order_id = o.id
join {{ source('raw', 'customers') }} c on o.customer_id = c.id and i.qty <= coalesce(c.tier, 1) * 3
