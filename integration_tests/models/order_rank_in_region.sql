-- window functions over a join: each order's rank by amount in its customer's region (NULL regions are one
-- partition), the region's order count and a running total of the customer's amounts by day
select o.id, c.region, o.amount,
       rank() over (partition by c.region order by o.amount desc) as place,
       count(*) over (partition by c.region) as region_orders,
       sum(o.amount) over (partition by o.customer_id order by o.day) as customer_to_date
from {{ source('raw', 'orders') }} o
join {{ source('raw', 'customers') }} c on o.customer_id = c.id
