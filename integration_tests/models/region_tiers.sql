-- SELECT DISTINCT (a row is present while its weight is positive)
select distinct region, tier from {{ source('raw', 'customers') }}
