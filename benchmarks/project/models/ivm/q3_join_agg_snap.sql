{{ bench_q3_join_agg('staging') }}
