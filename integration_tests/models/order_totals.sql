-- a global aggregate: exactly one row, also when the input is empty
select count(*) as orders, sum(amount) as amount, max(score) as best_score, min(day) as first_day
from {{ source('raw', 'orders') }}
