{{ bench_join_lines('staging') }}
