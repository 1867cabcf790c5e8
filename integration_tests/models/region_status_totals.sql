-- an aggregate over another incremental_ivm model (a chain)
select region, status, count(*) as orders, sum(amount) as revenue
from {{ ref('orders_customers') }}
group by region, status
