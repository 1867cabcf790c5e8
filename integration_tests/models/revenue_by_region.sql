-- GROUP BY over a join (NULL group key): every supported aggregate, FILTER, HAVING
select
    c.region,
    count(*) as orders,
    count(o.amount) as priced_orders,
    sum(o.amount) as revenue,
    avg(o.amount) as avg_amount,
    min(o.day) as first_day,
    max(o.day) as last_day,
    count(distinct o.customer_id) as customers,
    sum(distinct c.tier) as tiers_sum,
    count(*) filter (where o.status = 'paid') as paid_orders
from {{ source('raw', 'orders') }} o
join {{ source('raw', 'customers') }} c on o.customer_id = c.id
group by c.region
having count(*) > 1
