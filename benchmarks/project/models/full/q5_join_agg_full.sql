{{ bench_q5_join_agg() }}
