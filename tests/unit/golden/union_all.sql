-- model: SELECT o.o_id AS id, 'order' AS kind FROM shop.orders o UNION ALL SELECT c.c_id, 'customer' FROM shop.customers c
-- input shop.customers: columns ['c_id'], join index: False
-- input shop.orders: columns ['o_id'], join index: False
-- delta when shop.customers, shop.orders changed
SELECT c11 AS `id`, c12 AS `kind`, _ivm_weight
FROM (
  SELECT c4 AS c11, c5 AS c12, _ivm_weight
  FROM (
    SELECT c0 AS c4, 'order' AS c5, _ivm_weight
    FROM (
      SELECT `o_id` AS c0, _ivm_weight
      FROM <shop.orders@delta>
    ) AS t1
  ) AS t2
  UNION ALL
  SELECT c9 AS c11, c10 AS c12, _ivm_weight
  FROM (
    SELECT c6 AS c9, 'customer' AS c10, _ivm_weight
    FROM (
      SELECT `c_id` AS c6, _ivm_weight
      FROM <shop.customers@delta>
    ) AS t3
  ) AS t4
) AS _ivm_out;
-- delta when shop.customers changed
SELECT c11 AS `id`, c12 AS `kind`, _ivm_weight
FROM (
  SELECT c9 AS c11, c10 AS c12, _ivm_weight
  FROM (
    SELECT c6 AS c9, 'customer' AS c10, _ivm_weight
    FROM (
      SELECT `c_id` AS c6, _ivm_weight
      FROM <shop.customers@delta>
    ) AS t1
  ) AS t2
) AS _ivm_out;
-- delta when shop.orders changed
SELECT c11 AS `id`, c12 AS `kind`, _ivm_weight
FROM (
  SELECT c4 AS c11, c5 AS c12, _ivm_weight
  FROM (
    SELECT c0 AS c4, 'order' AS c5, _ivm_weight
    FROM (
      SELECT `o_id` AS c0, _ivm_weight
      FROM <shop.orders@delta>
    ) AS t1
  ) AS t2
) AS _ivm_out;
