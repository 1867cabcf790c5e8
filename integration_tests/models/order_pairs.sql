-- self-join with a date window
select a.customer_id, a.id as first_id, b.id as next_id, datediff(b.day, a.day) as days_between
from {{ source('raw', 'orders') }} a
join {{ source('raw', 'orders') }} b
  on a.customer_id = b.customer_id and a.id < b.id and b.day between a.day and date_add(a.day, 10)
