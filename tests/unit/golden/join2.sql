-- model: SELECT o.o_id, c.c_name FROM shop.orders o JOIN shop.customers c ON o.o_cust = c.c_id AND o.o_total > c.c_nation
-- input shop.customers: columns ['c_id', 'c_name', 'c_nation'], join index: True
-- input shop.orders: columns ['o_id', 'o_cust', 'o_total'], join index: True
-- delta when shop.customers, shop.orders changed
SELECT c7 AS `o_id`, c8 AS `c_name`, _ivm_weight
FROM (
  SELECT c0 AS c7, c5 AS c8, _ivm_weight
  FROM (
    SELECT c0 AS c0, c1 AS c1, c2 AS c2, c4 AS c4, c5 AS c5, c6 AS c6, _ivm_weight
    FROM (
      SELECT /*+ BROADCAST(t1) */ t1.c0, t1.c1, t1.c2, t2.c4, t2.c5, t2.c6, t1._ivm_weight * t2._ivm_weight AS _ivm_weight
      FROM (
        SELECT `o_id` AS c0, `o_cust` AS c1, `o_total` AS c2, _ivm_weight
        FROM <shop.orders@delta>
      ) AS t1
      JOIN (
        SELECT `c_id` AS c4, `c_name` AS c5, `c_nation` AS c6, _ivm_weight
        FROM <shop.customers@old>
      ) AS t2
        ON (t1.c1 = t2.c4) AND (t1.c2 > t2.c6)
    ) AS t3
    UNION ALL
    SELECT c0 AS c0, c1 AS c1, c2 AS c2, c4 AS c4, c5 AS c5, c6 AS c6, _ivm_weight
    FROM (
      SELECT c0 AS c0, c1 AS c1, c2 AS c2, c4 AS c4, c5 AS c5, c6 AS c6, _ivm_weight
      FROM (
        SELECT /*+ BROADCAST(t4) */ t4.c4, t4.c5, t4.c6, t5.c0, t5.c1, t5.c2, t4._ivm_weight * t5._ivm_weight AS _ivm_weight
        FROM (
          SELECT `c_id` AS c4, `c_name` AS c5, `c_nation` AS c6, _ivm_weight
          FROM <shop.customers@delta>
        ) AS t4
        JOIN (
          SELECT `o_id` AS c0, `o_cust` AS c1, `o_total` AS c2, _ivm_weight
          FROM <shop.orders@new>
        ) AS t5
          ON (t5.c1 = t4.c4) AND (t5.c2 > t4.c6)
      ) AS t6
    ) AS t7
  ) AS t8
) AS _ivm_out;
-- delta when shop.customers changed
SELECT c7 AS `o_id`, c8 AS `c_name`, _ivm_weight
FROM (
  SELECT c0 AS c7, c5 AS c8, _ivm_weight
  FROM (
    SELECT c0 AS c0, c1 AS c1, c2 AS c2, c4 AS c4, c5 AS c5, c6 AS c6, _ivm_weight
    FROM (
      SELECT /*+ BROADCAST(t1) */ t1.c4, t1.c5, t1.c6, t2.c0, t2.c1, t2.c2, t1._ivm_weight * t2._ivm_weight AS _ivm_weight
      FROM (
        SELECT `c_id` AS c4, `c_name` AS c5, `c_nation` AS c6, _ivm_weight
        FROM <shop.customers@delta>
      ) AS t1
      JOIN (
        SELECT `o_id` AS c0, `o_cust` AS c1, `o_total` AS c2, _ivm_weight
        FROM <shop.orders@new>
      ) AS t2
        ON (t2.c1 = t1.c4) AND (t2.c2 > t1.c6)
    ) AS t3
  ) AS t4
) AS _ivm_out;
-- delta when shop.orders changed
SELECT c7 AS `o_id`, c8 AS `c_name`, _ivm_weight
FROM (
  SELECT c0 AS c7, c5 AS c8, _ivm_weight
  FROM (
    SELECT /*+ BROADCAST(t1) */ t1.c0, t1.c1, t1.c2, t2.c4, t2.c5, t2.c6, t1._ivm_weight * t2._ivm_weight AS _ivm_weight
    FROM (
      SELECT `o_id` AS c0, `o_cust` AS c1, `o_total` AS c2, _ivm_weight
      FROM <shop.orders@delta>
    ) AS t1
    JOIN (
      SELECT `c_id` AS c4, `c_name` AS c5, `c_nation` AS c6, _ivm_weight
      FROM <shop.customers@old>
    ) AS t2
      ON (t1.c1 = t2.c4) AND (t1.c2 > t2.c6)
  ) AS t3
) AS _ivm_out;
