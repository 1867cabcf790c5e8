-- FULL OUTER JOIN, and a LEFT ANTI JOIN (orders whose customer is unknown)
select o.id as order_id, c.id as customer_id, c.tier, o.amount
from {{ source('raw', 'orders') }} o
full outer join {{ source('raw', 'customers') }} c on o.customer_id = c.id
union all
select o.id, o.customer_id, 'unknown', o.amount
from {{ source('raw', 'orders') }} o
left anti join {{ source('raw', 'customers') }} c on o.customer_id = c.id
