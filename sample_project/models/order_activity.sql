{{ config(materialized='incremental_ivm') }}

-- UNION ALL of two filtered views of the same table: one activity row per placed order and per
-- cancellation, tagged with the kind of event.
with placed as (
    select order_id, customer_id, order_date as activity_date, 'placed' as activity
    from {{ source('shop', 'orders') }}
    where status <> 'cancelled'
),
cancelled as (
    select order_id, customer_id, order_date as activity_date, 'cancelled' as activity
    from {{ source('shop', 'orders') }}
    where status = 'cancelled'
)
select * from placed
union all
select * from cancelled
