{{ bench_q3_join_agg('tpch_snapshots') }}
