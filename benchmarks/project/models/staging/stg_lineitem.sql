{{ config(materialized='view') }}
select * from {{ source('tpch_snapshots', 'lineitem') }}
