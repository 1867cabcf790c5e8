{{ bench_join_lines('tpch_snapshots') }}
