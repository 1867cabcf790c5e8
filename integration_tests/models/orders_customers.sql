-- two-way inner join (NULL and dangling keys join nothing)
select o.id as order_id, o.amount, o.status, o.day, c.id as customer_id, c.name, c.region, c.tier
from {{ source('raw', 'orders') }} o
join {{ source('raw', 'customers') }} c on o.customer_id = c.id
