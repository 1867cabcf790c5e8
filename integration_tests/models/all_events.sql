-- CTEs + UNION ALL
with placed as (
    select id as ref_id, 'order' as kind, day, amount as value from {{ source('raw', 'orders') }}
    where status <> 'void'
),
lines as (
    select order_id as ref_id, 'item' as kind, cast(null as date) as day, price * qty as value
    from {{ source('raw', 'items') }}
)
select * from placed
union all
select * from lines
