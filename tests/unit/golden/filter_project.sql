-- model: SELECT o.o_id, o.o_total * 2 AS double_total FROM shop.orders o WHERE o.o_total > 100
-- input shop.orders: columns ['o_id', 'o_total'], join index: False
-- delta when shop.orders changed
SELECT c4 AS `o_id`, c5 AS `double_total`, _ivm_weight
FROM (
  SELECT c0 AS c4, c2 * 2 AS c5, _ivm_weight
  FROM (
    SELECT *
    FROM (
      SELECT `o_id` AS c0, `o_total` AS c2, _ivm_weight
      FROM <shop.orders@delta>
    ) AS t1
    WHERE (c2 > 100)
  ) AS t2
) AS _ivm_out;
-- delta when shop.orders changed
SELECT c4 AS `o_id`, c5 AS `double_total`, _ivm_weight
FROM (
  SELECT c0 AS c4, c2 * 2 AS c5, _ivm_weight
  FROM (
    SELECT *
    FROM (
      SELECT `o_id` AS c0, `o_total` AS c2, _ivm_weight
      FROM <shop.orders@delta>
    ) AS t1
    WHERE (c2 > 100)
  ) AS t2
) AS _ivm_out;
