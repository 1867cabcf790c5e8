{{ bench_q3_top10() }}
