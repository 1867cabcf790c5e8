-- EXISTS (correlated, with a non-equi part), NOT IN over a nullable column (NULL semantics), IN
select o.id, o.customer_id, o.status, o.amount
from {{ source('raw', 'orders') }} o
where exists (select 1 from {{ source('raw', 'items') }} i where i.order_id = o.id and i.qty > 2)
  and o.customer_id not in (select c.id from {{ source('raw', 'customers') }} c where c.tier = 3)
  and o.customer_id in (select c.id from {{ source('raw', 'customers') }} c where c.region is not null)
