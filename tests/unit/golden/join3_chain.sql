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
      SELECT /*+ BROADCAST(t1) */ t1.c0, t1.c1, t2.c4, t2.c5, t2.c6, t3.c7, t3.c8, t1._ivm_weight * t2._ivm_weight * t3._ivm_weight AS _ivm_weight
      FROM (
        SELECT `o_id` AS c0, `o_cust` AS c1, _ivm_weight
        FROM <shop.orders@delta>
      ) AS t1
      JOIN (
        SELECT `c_id` AS c4, `c_name` AS c5, `c_nation` AS c6, _ivm_weight
        FROM <shop.customers@old>
      ) AS t2
        ON (t1.c1 = t2.c4)
      JOIN (
        SELECT `n_id` AS c7, `n_name` AS c8, _ivm_weight
        FROM <shop.nations@old>
      ) AS t3
        ON (t2.c6 = t3.c7)
    ) AS t4
    UNION ALL
    SELECT c0 AS c0, c1 AS c1, c4 AS c4, c5 AS c5, c6 AS c6, c7 AS c7, c8 AS c8, _ivm_weight
    FROM (
      SELECT c0 AS c0, c1 AS c1, c4 AS c4, c5 AS c5, c6 AS c6, c7 AS c7, c8 AS c8, _ivm_weight
      FROM (
        SELECT /*+ BROADCAST(t5) */ t5.c4, t5.c5, t5.c6, t6.c0, t6.c1, t7.c7, t7.c8, t5._ivm_weight * t6._ivm_weight * t7._ivm_weight AS _ivm_weight
        FROM (
          SELECT `c_id` AS c4, `c_name` AS c5, `c_nation` AS c6, _ivm_weight
          FROM <shop.customers@delta>
        ) AS t5
        JOIN (
          SELECT `o_id` AS c0, `o_cust` AS c1, _ivm_weight
          FROM <shop.orders@new>
        ) AS t6
          ON (t6.c1 = t5.c4)
        JOIN (
          SELECT `n_id` AS c7, `n_name` AS c8, _ivm_weight
          FROM <shop.nations@old>
        ) AS t7
          ON (t5.c6 = t7.c7)
      ) AS t8
    ) AS t9
    UNION ALL
    SELECT c0 AS c0, c1 AS c1, c4 AS c4, c5 AS c5, c6 AS c6, c7 AS c7, c8 AS c8, _ivm_weight
    FROM (
      SELECT c0 AS c0, c1 AS c1, c4 AS c4, c5 AS c5, c6 AS c6, c7 AS c7, c8 AS c8, _ivm_weight
      FROM (
        SELECT /*+ BROADCAST(t10) */ t10.c7, t10.c8, t11.c4, t11.c5, t11.c6, t12.c0, t12.c1, t10._ivm_weight * t11._ivm_weight * t12._ivm_weight AS _ivm_weight
        FROM (
          SELECT `n_id` AS c7, `n_name` AS c8, _ivm_weight
          FROM <shop.nations@delta>
        ) AS t10
        JOIN (
          SELECT `c_id` AS c4, `c_name` AS c5, `c_nation` AS c6, _ivm_weight
          FROM <shop.customers@new>
        ) AS t11
          ON (t11.c6 = t10.c7)
        JOIN (
          SELECT `o_id` AS c0, `o_cust` AS c1, _ivm_weight
          FROM <shop.orders@new>
        ) AS t12
          ON (t12.c1 = t11.c4)
      ) AS t13
    ) AS t14
  ) AS t15
) AS _ivm_out;
-- delta when shop.customers changed
SELECT c9 AS `o_id`, c10 AS `c_name`, c11 AS `n_name`, _ivm_weight
FROM (
  SELECT c0 AS c9, c5 AS c10, c8 AS c11, _ivm_weight
  FROM (
    SELECT c0 AS c0, c1 AS c1, c4 AS c4, c5 AS c5, c6 AS c6, c7 AS c7, c8 AS c8, _ivm_weight
    FROM (
      SELECT /*+ BROADCAST(t1) */ t1.c4, t1.c5, t1.c6, t2.c0, t2.c1, t3.c7, t3.c8, t1._ivm_weight * t2._ivm_weight * t3._ivm_weight AS _ivm_weight
      FROM (
        SELECT `c_id` AS c4, `c_name` AS c5, `c_nation` AS c6, _ivm_weight
        FROM <shop.customers@delta>
      ) AS t1
      JOIN (
        SELECT `o_id` AS c0, `o_cust` AS c1, _ivm_weight
        FROM <shop.orders@new>
      ) AS t2
        ON (t2.c1 = t1.c4)
      JOIN (
        SELECT `n_id` AS c7, `n_name` AS c8, _ivm_weight
        FROM <shop.nations@old>
      ) AS t3
        ON (t1.c6 = t3.c7)
    ) AS t4
  ) AS t5
) AS _ivm_out;
-- delta when shop.nations changed
SELECT c9 AS `o_id`, c10 AS `c_name`, c11 AS `n_name`, _ivm_weight
FROM (
  SELECT c0 AS c9, c5 AS c10, c8 AS c11, _ivm_weight
  FROM (
    SELECT c0 AS c0, c1 AS c1, c4 AS c4, c5 AS c5, c6 AS c6, c7 AS c7, c8 AS c8, _ivm_weight
    FROM (
      SELECT /*+ BROADCAST(t1) */ t1.c7, t1.c8, t2.c4, t2.c5, t2.c6, t3.c0, t3.c1, t1._ivm_weight * t2._ivm_weight * t3._ivm_weight AS _ivm_weight
      FROM (
        SELECT `n_id` AS c7, `n_name` AS c8, _ivm_weight
        FROM <shop.nations@delta>
      ) AS t1
      JOIN (
        SELECT `c_id` AS c4, `c_name` AS c5, `c_nation` AS c6, _ivm_weight
        FROM <shop.customers@new>
      ) AS t2
        ON (t2.c6 = t1.c7)
      JOIN (
        SELECT `o_id` AS c0, `o_cust` AS c1, _ivm_weight
        FROM <shop.orders@new>
      ) AS t3
        ON (t3.c1 = t2.c4)
    ) AS t4
  ) AS t5
) AS _ivm_out;
-- delta when shop.orders changed
SELECT c9 AS `o_id`, c10 AS `c_name`, c11 AS `n_name`, _ivm_weight
FROM (
  SELECT c0 AS c9, c5 AS c10, c8 AS c11, _ivm_weight
  FROM (
    SELECT /*+ BROADCAST(t1) */ t1.c0, t1.c1, t2.c4, t2.c5, t2.c6, t3.c7, t3.c8, t1._ivm_weight * t2._ivm_weight * t3._ivm_weight AS _ivm_weight
    FROM (
      SELECT `o_id` AS c0, `o_cust` AS c1, _ivm_weight
      FROM <shop.orders@delta>
    ) AS t1
    JOIN (
      SELECT `c_id` AS c4, `c_name` AS c5, `c_nation` AS c6, _ivm_weight
      FROM <shop.customers@old>
    ) AS t2
      ON (t1.c1 = t2.c4)
    JOIN (
      SELECT `n_id` AS c7, `n_name` AS c8, _ivm_weight
      FROM <shop.nations@old>
    ) AS t3
      ON (t2.c6 = t3.c7)
  ) AS t4
) AS _ivm_out;
