SELECT * FROM (
<zset>
) AS _ivm_rows
WHERE `id` > 3
;
(SELECT `id`, `weird ``name```, CAST(1 AS BIGINT) AS _ivm_weight FROM `raw`.`orders_changes` WHERE FALSE) AS _ivm_empty
;
(
<delta>
) AS _ivm_delta
;
(
SELECT `id`, `weird ``name```, _ivm_weight FROM `s_ivm`.`m__index__raw__orders` VERSION AS OF 42
UNION ALL
SELECT `id`, `weird ``name```, _ivm_weight FROM (
<delta>
) AS _ivm_delta
) AS _ivm_new
;
SELECT `id`, `weird ``name```, _ivm_weight FROM (
  <base at a tag>
) AS _ivm_term0
UNION ALL
SELECT `id`, `weird ``name```, -_ivm_weight AS _ivm_weight FROM (
  <changes above the mark>
) AS _ivm_term1
;
SELECT CAST(_ivm_z.c0 AS int) AS `id`, CAST(_ivm_z.c1 AS decimal(10,2)) AS `weird ``name```
FROM (
<zset>
) AS _ivm_z
LATERAL VIEW explode(sequence(1, _ivm_z._ivm_weight)) _ivm_copies AS _ivm_copy
;
SELECT 's.m' AS name, CAST(count(*) AS BIGINT) AS differing FROM (
  ((<stored>) EXCEPT ALL (<expected>))
  UNION ALL
  ((<expected>) EXCEPT ALL (<stored>))
) AS _ivm_rows
