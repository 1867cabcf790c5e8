-- UNION (distinct) of two filters of one input
select sku from {{ source('raw', 'items') }} where qty > 2
union
select sku from {{ source('raw', 'items') }} where price > 50
