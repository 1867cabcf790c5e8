-- EXCEPT and INTERSECT ALL
(select id from {{ source('raw', 'customers') }}
 except
 select customer_id from {{ source('raw', 'orders') }} where status = 'paid')
union all
(select customer_id from {{ source('raw', 'orders') }} where status = 'open'
 intersect all
 select customer_id from {{ source('raw', 'orders') }} where amount > 20)
