{{ bench_join_lines() }}
