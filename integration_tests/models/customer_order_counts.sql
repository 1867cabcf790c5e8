-- LEFT JOIN feeding an aggregate (TPC-H Q13's shape): customers with no orders count 0
select c.id as customer_id, c.region, count(o.id) as orders, sum(o.amount) as amount
from {{ source('raw', 'customers') }} c
left join {{ source('raw', 'orders') }} o on o.customer_id = c.id and o.status <> 'void'
group by c.id, c.region
