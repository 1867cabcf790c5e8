-- GROUP BY with a NULL key, MIN/MAX of decimals, a float sum (exactly as Spark sums it)
select sku, sum(qty) as units, min(price) as min_price, max(price) as max_price,
       sum(cast(price as double) * qty) as gross_float
from {{ source('raw', 'items') }}
group by sku
