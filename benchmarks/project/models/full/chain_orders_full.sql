{{ bench_chain_orders() }}
