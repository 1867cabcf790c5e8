{{ config(materialized='incremental_ivm') }}

-- Orders still to be fulfilled, with a few derived columns.
select
    order_id,
    customer_id,
    order_date,
    upper(channel) as channel,
    case when status = 'paid' then 'ready to ship' else 'awaiting payment' end as stage,
    datediff(date'2024-07-01', order_date) as age_days,
    customer_id is null as guest_checkout
from {{ source('shop', 'orders') }}
where status in ('open', 'paid')
