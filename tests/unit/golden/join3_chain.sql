-- model: SELECT o.o_id, c.c_name, n.n_name FROM shop.orders o JOIN shop.customers c ON o.o_cust = c.c_id JOIN shop.nations n ON c.c_nation = n.n_id
-- input shop.customers: columns ['c_id', 'c_name', 'c_nation'], join index: True
-- input shop.nations: columns ['n_id', 'n_name'], join index: True
-- input shop.orders: columns ['o_id', 'o_cust'], join index: True
-- delta when shop.customers, shop.nations, shop.orders changed
SELECT c9 AS `o_id`, c10 AS `c_name`, c11 AS `n_name`, _ivm_weight
FROM (
  SELECT c0 AS c9, c5 AS c10, c8 AS c11, _ivm_weight
  FROM (
    SELECT c0 AS c0, c1 AS c1, c4 AS c4, c5 AS c5, c6 AS c6, c7 AS c7, c8 AS c8, _ivm_weight
    FROM (
      SELECT /*+ BROADCAST(t3) */ t3.c0, t3.c1, t3.c4, t3.c5, t3.c6, t4.c7, t4.c8, t3._ivm_weight * t4._ivm_weight AS _ivm_weight
      FROM (
        SELECT /*+ BROADCAST(t1) */ t1.c0, t1.c1, t2.c4, t2.c5, t2.c6, t1._ivm_weight * t2._ivm_weight AS _ivm_weight
        FROM (
          SELECT `o_id` AS c0, `o_cust` AS c1, _ivm_weight
          FROM <shop.orders@delta>
        ) AS t1
        JOIN (
          SELECT `c_id` AS c4, `c_name` AS c5, `c_nation` AS c6, _ivm_weight
          FROM <shop.customers@old>
        ) AS t2
          ON (t1.c1 = t2.c4)
      ) AS t3
      JOIN (
        SELECT `n_id` AS c7, `n_name` AS c8, _ivm_weight
        FROM <shop.nations@old>
      ) AS t4
        ON (t3.c6 = t4.c7)
    ) AS t5
    UNION ALL
    SELECT c0 AS c0, c1 AS c1, c4 AS c4, c5 AS c5, c6 AS c6, c7 AS c7, c8 AS c8, _ivm_weight
    FROM (
      SELECT c0 AS c0, c1 AS c1, c4 AS c4, c5 AS c5, c6 AS c6, c7 AS c7, c8 AS c8, _ivm_weight
      FROM (
        SELECT /*+ BROADCAST(t8) */ t8.c4, t8.c5, t8.c6, t8.c0, t8.c1, t9.c7, t9.c8, t8._ivm_weight * t9._ivm_weight AS _ivm_weight
        FROM (
          SELECT /*+ BROADCAST(t6) */ t6.c4, t6.c5, t6.c6, t7.c0, t7.c1, t6._ivm_weight * t7._ivm_weight AS _ivm_weight
          FROM (
            SELECT `c_id` AS c4, `c_name` AS c5, `c_nation` AS c6, _ivm_weight
            FROM <shop.customers@delta>
          ) AS t6
          JOIN (
            SELECT `o_id` AS c0, `o_cust` AS c1, _ivm_weight
            FROM <shop.orders@new>
          ) AS t7
            ON (t7.c1 = t6.c4)
        ) AS t8
        JOIN (
          SELECT `n_id` AS c7, `n_name` AS c8, _ivm_weight
          FROM <shop.nations@old>
        ) AS t9
          ON (t8.c6 = t9.c7)
      ) AS t10
    ) AS t11
    UNION ALL
    SELECT c0 AS c0, c1 AS c1, c4 AS c4, c5 AS c5, c6 AS c6, c7 AS c7, c8 AS c8, _ivm_weight
    FROM (
      SELECT c0 AS c0, c1 AS c1, c4 AS c4, c5 AS c5, c6 AS c6, c7 AS c7, c8 AS c8, _ivm_weight
      FROM (
        SELECT /*+ BROADCAST(t14) */ t14.c7, t14.c8, t14.c4, t14.c5, t14.c6, t15.c0, t15.c1, t14._ivm_weight * t15._ivm_weight AS _ivm_weight
        FROM (
          SELECT /*+ BROADCAST(t12) */ t12.c7, t12.c8, t13.c4, t13.c5, t13.c6, t12._ivm_weight * t13._ivm_weight AS _ivm_weight
          FROM (
            SELECT `n_id` AS c7, `n_name` AS c8, _ivm_weight
            FROM <shop.nations@delta>
          ) AS t12
          JOIN (
            SELECT `c_id` AS c4, `c_name` AS c5, `c_nation` AS c6, _ivm_weight
            FROM <shop.customers@new>
          ) AS t13
            ON (t13.c6 = t12.c7)
        ) AS t14
        JOIN (
          SELECT `o_id` AS c0, `o_cust` AS c1, _ivm_weight
          FROM <shop.orders@new>
        ) AS t15
          ON (t15.c1 = t14.c4)
      ) AS t16
    ) AS t17
  ) AS t18
) AS _ivm_out;
-- delta when shop.customers changed
SELECT c9 AS `o_id`, c10 AS `c_name`, c11 AS `n_name`, _ivm_weight
FROM (
  SELECT c0 AS c9, c5 AS c10, c8 AS c11, _ivm_weight
  FROM (
    SELECT c0 AS c0, c1 AS c1, c4 AS c4, c5 AS c5, c6 AS c6, c7 AS c7, c8 AS c8, _ivm_weight
    FROM (
      SELECT /*+ BROADCAST(t3) */ t3.c4, t3.c5, t3.c6, t3.c0, t3.c1, t4.c7, t4.c8, t3._ivm_weight * t4._ivm_weight AS _ivm_weight
      FROM (
        SELECT /*+ BROADCAST(t1) */ t1.c4, t1.c5, t1.c6, t2.c0, t2.c1, t1._ivm_weight * t2._ivm_weight AS _ivm_weight
        FROM (
          SELECT `c_id` AS c4, `c_name` AS c5, `c_nation` AS c6, _ivm_weight
          FROM <shop.customers@delta>
        ) AS t1
        JOIN (
          SELECT `o_id` AS c0, `o_cust` AS c1, _ivm_weight
          FROM <shop.orders@new>
        ) AS t2
          ON (t2.c1 = t1.c4)
      ) AS t3
      JOIN (
        SELECT `n_id` AS c7, `n_name` AS c8, _ivm_weight
        FROM <shop.nations@old>
      ) AS t4
        ON (t3.c6 = t4.c7)
    ) AS t5
  ) AS t6
) AS _ivm_out;
-- delta when shop.nations changed
SELECT c9 AS `o_id`, c10 AS `c_name`, c11 AS `n_name`, _ivm_weight
FROM (
  SELECT c0 AS c9, c5 AS c10, c8 AS c11, _ivm_weight
  FROM (
    SELECT c0 AS c0, c1 AS c1, c4 AS c4, c5 AS c5, c6 AS c6, c7 AS c7, c8 AS c8, _ivm_weight
    FROM (
      SELECT /*+ BROADCAST(t3) */ t3.c7, t3.c8, t3.c4, t3.c5, t3.c6, t4.c0, t4.c1, t3._ivm_weight * t4._ivm_weight AS _ivm_weight
      FROM (
        SELECT /*+ BROADCAST(t1) */ t1.c7, t1.c8, t2.c4, t2.c5, t2.c6, t1._ivm_weight * t2._ivm_weight AS _ivm_weight
        FROM (
          SELECT `n_id` AS c7, `n_name` AS c8, _ivm_weight
          FROM <shop.nations@delta>
        ) AS t1
        JOIN (
          SELECT `c_id` AS c4, `c_name` AS c5, `c_nation` AS c6, _ivm_weight
          FROM <shop.customers@new>
        ) AS t2
          ON (t2.c6 = t1.c7)
      ) AS t3
      JOIN (
        SELECT `o_id` AS c0, `o_cust` AS c1, _ivm_weight
        FROM <shop.orders@new>
      ) AS t4
        ON (t4.c1 = t3.c4)
    ) AS t5
  ) AS t6
) AS _ivm_out;
-- delta when shop.orders changed
SELECT c9 AS `o_id`, c10 AS `c_name`, c11 AS `n_name`, _ivm_weight
FROM (
  SELECT c0 AS c9, c5 AS c10, c8 AS c11, _ivm_weight
  FROM (
    SELECT /*+ BROADCAST(t3) */ t3.c0, t3.c1, t3.c4, t3.c5, t3.c6, t4.c7, t4.c8, t3._ivm_weight * t4._ivm_weight AS _ivm_weight
    FROM (
      SELECT /*+ BROADCAST(t1) */ t1.c0, t1.c1, t2.c4, t2.c5, t2.c6, t1._ivm_weight * t2._ivm_weight AS _ivm_weight
      FROM (
        SELECT `o_id` AS c0, `o_cust` AS c1, _ivm_weight
        FROM <shop.orders@delta>
      ) AS t1
      JOIN (
        SELECT `c_id` AS c4, `c_name` AS c5, `c_nation` AS c6, _ivm_weight
        FROM <shop.customers@old>
      ) AS t2
        ON (t1.c1 = t2.c4)
    ) AS t3
    JOIN (
      SELECT `n_id` AS c7, `n_name` AS c8, _ivm_weight
      FROM <shop.nations@old>
    ) AS t4
      ON (t3.c6 = t4.c7)
  ) AS t5
) AS _ivm_out;
