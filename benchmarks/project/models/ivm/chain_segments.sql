{{ bench_chain_segments(ref('chain_orders')) }}
