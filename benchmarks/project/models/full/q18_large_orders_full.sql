{{ bench_q18_large_orders() }}
