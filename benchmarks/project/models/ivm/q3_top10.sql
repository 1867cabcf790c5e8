{{ config(ivm_policy='auto') }}
{{ bench_q3_top10() }}
