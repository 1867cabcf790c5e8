-- an aggregate joined back to a table, and a nested aggregate over it
with totals as (
    select customer_id, sum(amount) as total, count(*) as n
    from {{ source('raw', 'orders') }}
    group by customer_id
)
select c.region, t.n, count(*) as customers, max(t.total) as top_total
from totals t
join {{ source('raw', 'customers') }} c on t.customer_id = c.id
where t.total > 40
group by c.region, t.n
