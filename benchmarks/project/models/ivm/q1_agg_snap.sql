{{ bench_q1_agg('tpch_snapshots') }}
