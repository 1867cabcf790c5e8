{{ bench_latest_order() }}
