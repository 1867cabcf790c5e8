{{ bench_distinct_ship() }}
