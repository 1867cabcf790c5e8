-- window functions, dbt's dedup pattern: each customer's latest order (row_number() … = 1); the ORDER BY
-- orders every column, so no two different rows tie and the check compares exactly
select customer_id, id, day, amount
from (
  select o.customer_id, o.id, o.day, o.amount,
         row_number() over (partition by o.customer_id
                            order by o.day desc, o.id desc, o.amount, o.status, o.score) as rn
  from {{ source('raw', 'orders') }} o
) latest
where rn = 1
