{{ bench_order_revenue() }}
