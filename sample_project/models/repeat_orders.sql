{{ config(materialized='incremental_ivm') }}

-- Self-join with a non-equi condition: a customer ordering again within 7 days of an earlier order.
select
    a.customer_id,
    a.order_id as first_order_id,
    b.order_id as next_order_id,
    a.order_date as first_order_date,
    b.order_date as next_order_date,
    datediff(b.order_date, a.order_date) as days_between
from {{ source('shop', 'orders') }} a
join {{ source('shop', 'orders') }} b
  on a.customer_id = b.customer_id
 and b.order_date >= a.order_date
 and b.order_date <= date_add(a.order_date, 7)
 and a.order_id < b.order_id
where a.status <> 'cancelled' and b.status <> 'cancelled'
