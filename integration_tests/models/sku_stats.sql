-- GROUP BY with a NULL key, MIN/MAX of decimals, a float sum (exactly as Spark sums it), the
-- spread of prices (variance, standard deviation), COUNT_IF and BOOL_AND/BOOL_OR
select sku, sum(qty) as units, min(price) as min_price, max(price) as max_price,
       sum(cast(price as double) * qty) as gross_float,
       stddev(price) as price_stddev, var_pop(qty) as qty_var_pop,
       count_if(qty > 2) as big_lines, bool_and(price > 5) as all_over_5, bool_or(qty is null) as some_qty_missing
from {{ source('raw', 'items') }}
group by sku
