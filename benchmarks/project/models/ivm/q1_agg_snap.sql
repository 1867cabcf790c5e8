{{ bench_q1_agg('staging') }}
