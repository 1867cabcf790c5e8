-- filter + projection: expressions, CASE, NULL-aware predicates
select
    id,
    customer_id,
    amount * 2 as doubled,
    upper(status) as status_uc,
    case when score > 0.5 then 'high' when score is null then 'unknown' else 'low' end as band,
    datediff(day, date'2024-01-01') as age_days
from {{ source('raw', 'orders') }}
where status <> 'void' or amount is null
