-- top-k: the five customers with the highest paid amount (ties at the limit may go either way)
select o.customer_id, sum(o.amount) as paid, count(*) as orders
from {{ source('raw', 'orders') }} o
where o.status = 'paid'
group by o.customer_id
order by paid desc nulls last
limit 5
