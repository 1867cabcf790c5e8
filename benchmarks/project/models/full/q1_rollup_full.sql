{{ bench_q1_rollup() }}
