-- model: SELECT c.c_nation, count(*) AS orders, sum(o.o_total) AS revenue FROM shop.orders o JOIN shop.customers c ON o.o_cust = c.c_id GROUP BY c.c_nation
-- input shop.customers: columns ['c_id', 'c_nation'], join index: True
-- input shop.orders: columns ['o_cust', 'o_total'], join index: True
-- delta when shop.customers, shop.orders changed
SELECT c12 AS `c_nation`, c13 AS `orders`, c14 AS `revenue`, _ivm_weight
FROM (
  SELECT c8 AS c12, c9 AS c13, c11 AS c14, _ivm_weight
  FROM (
    WITH _ivm_d AS (
      SELECT c6 AS c7, c2 AS c10, _ivm_weight
      FROM (
        SELECT c1 AS c1, c2 AS c2, c4 AS c4, c6 AS c6, _ivm_weight
        FROM (
          SELECT /*+ BROADCAST(t1) */ t1.c1, t1.c2, t2.c4, t2.c6, t1._ivm_weight * t2._ivm_weight AS _ivm_weight
          FROM (
            SELECT `o_cust` AS c1, `o_total` AS c2, _ivm_weight
            FROM <shop.orders@delta>
          ) AS t1
          JOIN (
            SELECT `c_id` AS c4, `c_nation` AS c6, _ivm_weight
            FROM <shop.customers@old>
          ) AS t2
            ON (t1.c1 = t2.c4)
        ) AS t3
        UNION ALL
        SELECT c1 AS c1, c2 AS c2, c4 AS c4, c6 AS c6, _ivm_weight
        FROM (
          SELECT c1 AS c1, c2 AS c2, c4 AS c4, c6 AS c6, _ivm_weight
          FROM (
            SELECT /*+ BROADCAST(t4) */ t4.c4, t4.c6, t5.c1, t5.c2, t4._ivm_weight * t5._ivm_weight AS _ivm_weight
            FROM (
              SELECT `c_id` AS c4, `c_nation` AS c6, _ivm_weight
              FROM <shop.customers@delta>
            ) AS t4
            JOIN (
              SELECT `o_cust` AS c1, `o_total` AS c2, _ivm_weight
              FROM <shop.orders@new>
            ) AS t5
              ON (t5.c1 = t4.c4)
          ) AS t6
        ) AS t7
      ) AS t8
    ),
    _ivm_p AS (
      SELECT `c7`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_count, coalesce(sum(`c10` * _ivm_weight), 0) AS `c11_s`, CAST(coalesce(sum(CASE WHEN `c10` IS NOT NULL THEN _ivm_weight END), 0) AS BIGINT) AS `c11_n`
      FROM (
        SELECT * FROM _ivm_d
      ) AS _ivm_c
      GROUP BY `c7`
      HAVING count(*) > 0
    ),
    _ivm_t AS (
      SELECT DISTINCT `c7` FROM _ivm_p
    ),
    _ivm_og AS (
      SELECT s.* FROM (SELECT t.`c_nation` AS `c7`, CAST(t.`orders` AS BIGINT) AS `_ivm_count`, t.`revenue` AS `c11_s`, CAST(t.`orders` AS BIGINT) AS `c11_n` FROM <state agg0.target> AS t) AS s LEFT SEMI JOIN _ivm_t AS t ON s.`c7` <=> t.`c7`
    ),
    _ivm_gs AS (
      SELECT `c7`, inline(array(named_struct('_ivm_count', `_ivm_old_count`, 'c11_s', `_ivm_old_c11_s`, 'c11_n', `_ivm_old_c11_n`, '_ivm_side', CAST(-1 AS BIGINT)), named_struct('_ivm_count', `_ivm_count`, 'c11_s', `c11_s`, 'c11_n', `c11_n`, '_ivm_side', CAST(1 AS BIGINT))))
      FROM (
        SELECT `c7`, CAST(sum(CASE WHEN _ivm_is_old THEN `_ivm_count` END) AS BIGINT) AS `_ivm_old_count`, CASE WHEN count(CASE WHEN _ivm_is_old THEN 1 END) = count(CASE WHEN _ivm_is_old THEN `c11_s` END) THEN sum(CASE WHEN _ivm_is_old THEN `c11_s` END) END AS `_ivm_old_c11_s`, CAST(sum(CASE WHEN _ivm_is_old THEN `c11_n` END) AS BIGINT) AS `_ivm_old_c11_n`, CAST(sum(`_ivm_count`) AS BIGINT) AS `_ivm_count`, CASE WHEN count(*) = count(`c11_s`) THEN sum(`c11_s`) END AS `c11_s`, CAST(sum(`c11_n`) AS BIGINT) AS `c11_n`
        FROM (
          SELECT `c7`, `_ivm_count`, `c11_s`, `c11_n`, TRUE AS _ivm_is_old FROM _ivm_og
          UNION ALL
          SELECT `c7`, `_ivm_count`, `c11_s`, `c11_n`, FALSE AS _ivm_is_old FROM _ivm_p
        ) AS _ivm_u
        GROUP BY `c7`
      ) AS _ivm_on
    )
    SELECT `c8`, `c9`, `c11`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
    FROM (
      SELECT `c8`, `c9`, `c11`, CAST(1 AS BIGINT) * _ivm_side AS _ivm_weight
      FROM (
        SELECT _ivm_g.`c7` AS `c8`, coalesce(_ivm_g._ivm_count, 0) AS `c9`, CASE WHEN coalesce(_ivm_g.`c11_n`, 0) > 0 THEN CAST(_ivm_g.`c11_s` AS decimal(22,2)) END AS `c11`, coalesce(_ivm_g._ivm_count, 0) AS _ivm_count, _ivm_g._ivm_side
        FROM (
          SELECT * FROM (
            SELECT * FROM _ivm_gs
          ) AS r
          WHERE CASE WHEN r.`_ivm_count` <> 0 AND (r.`c11_n` <> r.`_ivm_count` OR CAST(r.`c11_s` AS decimal(22,2)) IS NULL) THEN CAST(raise_error('the target row of a group would not determine its state (a SUM with a NULL value, or one that overflowed)') AS BOOLEAN) ELSE TRUE END
        ) AS _ivm_g
        WHERE CASE WHEN _ivm_g._ivm_count < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a group would become negative)') AS BIGINT) ELSE _ivm_g._ivm_count END > 0
      ) AS _ivm_r
      WHERE CAST(1 AS BIGINT) > 0
    ) AS _ivm_x
    GROUP BY `c8`, `c9`, `c11`
    HAVING sum(_ivm_weight) <> 0
  ) AS t9
) AS _ivm_out;
-- delta when shop.customers changed
SELECT c12 AS `c_nation`, c13 AS `orders`, c14 AS `revenue`, _ivm_weight
FROM (
  SELECT c8 AS c12, c9 AS c13, c11 AS c14, _ivm_weight
  FROM (
    WITH _ivm_d AS (
      SELECT c6 AS c7, c2 AS c10, _ivm_weight
      FROM (
        SELECT c1 AS c1, c2 AS c2, c4 AS c4, c6 AS c6, _ivm_weight
        FROM (
          SELECT /*+ BROADCAST(t1) */ t1.c4, t1.c6, t2.c1, t2.c2, t1._ivm_weight * t2._ivm_weight AS _ivm_weight
          FROM (
            SELECT `c_id` AS c4, `c_nation` AS c6, _ivm_weight
            FROM <shop.customers@delta>
          ) AS t1
          JOIN (
            SELECT `o_cust` AS c1, `o_total` AS c2, _ivm_weight
            FROM <shop.orders@new>
          ) AS t2
            ON (t2.c1 = t1.c4)
        ) AS t3
      ) AS t4
    ),
    _ivm_p AS (
      SELECT `c7`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_count, coalesce(sum(`c10` * _ivm_weight), 0) AS `c11_s`, CAST(coalesce(sum(CASE WHEN `c10` IS NOT NULL THEN _ivm_weight END), 0) AS BIGINT) AS `c11_n`
      FROM (
        SELECT * FROM _ivm_d
      ) AS _ivm_c
      GROUP BY `c7`
      HAVING count(*) > 0
    ),
    _ivm_t AS (
      SELECT DISTINCT `c7` FROM _ivm_p
    ),
    _ivm_og AS (
      SELECT s.* FROM (SELECT t.`c_nation` AS `c7`, CAST(t.`orders` AS BIGINT) AS `_ivm_count`, t.`revenue` AS `c11_s`, CAST(t.`orders` AS BIGINT) AS `c11_n` FROM <state agg0.target> AS t) AS s LEFT SEMI JOIN _ivm_t AS t ON s.`c7` <=> t.`c7`
    ),
    _ivm_gs AS (
      SELECT `c7`, inline(array(named_struct('_ivm_count', `_ivm_old_count`, 'c11_s', `_ivm_old_c11_s`, 'c11_n', `_ivm_old_c11_n`, '_ivm_side', CAST(-1 AS BIGINT)), named_struct('_ivm_count', `_ivm_count`, 'c11_s', `c11_s`, 'c11_n', `c11_n`, '_ivm_side', CAST(1 AS BIGINT))))
      FROM (
        SELECT `c7`, CAST(sum(CASE WHEN _ivm_is_old THEN `_ivm_count` END) AS BIGINT) AS `_ivm_old_count`, CASE WHEN count(CASE WHEN _ivm_is_old THEN 1 END) = count(CASE WHEN _ivm_is_old THEN `c11_s` END) THEN sum(CASE WHEN _ivm_is_old THEN `c11_s` END) END AS `_ivm_old_c11_s`, CAST(sum(CASE WHEN _ivm_is_old THEN `c11_n` END) AS BIGINT) AS `_ivm_old_c11_n`, CAST(sum(`_ivm_count`) AS BIGINT) AS `_ivm_count`, CASE WHEN count(*) = count(`c11_s`) THEN sum(`c11_s`) END AS `c11_s`, CAST(sum(`c11_n`) AS BIGINT) AS `c11_n`
        FROM (
          SELECT `c7`, `_ivm_count`, `c11_s`, `c11_n`, TRUE AS _ivm_is_old FROM _ivm_og
          UNION ALL
          SELECT `c7`, `_ivm_count`, `c11_s`, `c11_n`, FALSE AS _ivm_is_old FROM _ivm_p
        ) AS _ivm_u
        GROUP BY `c7`
      ) AS _ivm_on
    )
    SELECT `c8`, `c9`, `c11`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
    FROM (
      SELECT `c8`, `c9`, `c11`, CAST(1 AS BIGINT) * _ivm_side AS _ivm_weight
      FROM (
        SELECT _ivm_g.`c7` AS `c8`, coalesce(_ivm_g._ivm_count, 0) AS `c9`, CASE WHEN coalesce(_ivm_g.`c11_n`, 0) > 0 THEN CAST(_ivm_g.`c11_s` AS decimal(22,2)) END AS `c11`, coalesce(_ivm_g._ivm_count, 0) AS _ivm_count, _ivm_g._ivm_side
        FROM (
          SELECT * FROM (
            SELECT * FROM _ivm_gs
          ) AS r
          WHERE CASE WHEN r.`_ivm_count` <> 0 AND (r.`c11_n` <> r.`_ivm_count` OR CAST(r.`c11_s` AS decimal(22,2)) IS NULL) THEN CAST(raise_error('the target row of a group would not determine its state (a SUM with a NULL value, or one that overflowed)') AS BOOLEAN) ELSE TRUE END
        ) AS _ivm_g
        WHERE CASE WHEN _ivm_g._ivm_count < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a group would become negative)') AS BIGINT) ELSE _ivm_g._ivm_count END > 0
      ) AS _ivm_r
      WHERE CAST(1 AS BIGINT) > 0
    ) AS _ivm_x
    GROUP BY `c8`, `c9`, `c11`
    HAVING sum(_ivm_weight) <> 0
  ) AS t5
) AS _ivm_out;
-- delta when shop.orders changed
SELECT c12 AS `c_nation`, c13 AS `orders`, c14 AS `revenue`, _ivm_weight
FROM (
  SELECT c8 AS c12, c9 AS c13, c11 AS c14, _ivm_weight
  FROM (
    WITH _ivm_d AS (
      SELECT c6 AS c7, c2 AS c10, _ivm_weight
      FROM (
        SELECT /*+ BROADCAST(t1) */ t1.c1, t1.c2, t2.c4, t2.c6, t1._ivm_weight * t2._ivm_weight AS _ivm_weight
        FROM (
          SELECT `o_cust` AS c1, `o_total` AS c2, _ivm_weight
          FROM <shop.orders@delta>
        ) AS t1
        JOIN (
          SELECT `c_id` AS c4, `c_nation` AS c6, _ivm_weight
          FROM <shop.customers@old>
        ) AS t2
          ON (t1.c1 = t2.c4)
      ) AS t3
    ),
    _ivm_p AS (
      SELECT `c7`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_count, coalesce(sum(`c10` * _ivm_weight), 0) AS `c11_s`, CAST(coalesce(sum(CASE WHEN `c10` IS NOT NULL THEN _ivm_weight END), 0) AS BIGINT) AS `c11_n`
      FROM (
        SELECT * FROM _ivm_d
      ) AS _ivm_c
      GROUP BY `c7`
      HAVING count(*) > 0
    ),
    _ivm_t AS (
      SELECT DISTINCT `c7` FROM _ivm_p
    ),
    _ivm_og AS (
      SELECT s.* FROM (SELECT t.`c_nation` AS `c7`, CAST(t.`orders` AS BIGINT) AS `_ivm_count`, t.`revenue` AS `c11_s`, CAST(t.`orders` AS BIGINT) AS `c11_n` FROM <state agg0.target> AS t) AS s LEFT SEMI JOIN _ivm_t AS t ON s.`c7` <=> t.`c7`
    ),
    _ivm_gs AS (
      SELECT `c7`, inline(array(named_struct('_ivm_count', `_ivm_old_count`, 'c11_s', `_ivm_old_c11_s`, 'c11_n', `_ivm_old_c11_n`, '_ivm_side', CAST(-1 AS BIGINT)), named_struct('_ivm_count', `_ivm_count`, 'c11_s', `c11_s`, 'c11_n', `c11_n`, '_ivm_side', CAST(1 AS BIGINT))))
      FROM (
        SELECT `c7`, CAST(sum(CASE WHEN _ivm_is_old THEN `_ivm_count` END) AS BIGINT) AS `_ivm_old_count`, CASE WHEN count(CASE WHEN _ivm_is_old THEN 1 END) = count(CASE WHEN _ivm_is_old THEN `c11_s` END) THEN sum(CASE WHEN _ivm_is_old THEN `c11_s` END) END AS `_ivm_old_c11_s`, CAST(sum(CASE WHEN _ivm_is_old THEN `c11_n` END) AS BIGINT) AS `_ivm_old_c11_n`, CAST(sum(`_ivm_count`) AS BIGINT) AS `_ivm_count`, CASE WHEN count(*) = count(`c11_s`) THEN sum(`c11_s`) END AS `c11_s`, CAST(sum(`c11_n`) AS BIGINT) AS `c11_n`
        FROM (
          SELECT `c7`, `_ivm_count`, `c11_s`, `c11_n`, TRUE AS _ivm_is_old FROM _ivm_og
          UNION ALL
          SELECT `c7`, `_ivm_count`, `c11_s`, `c11_n`, FALSE AS _ivm_is_old FROM _ivm_p
        ) AS _ivm_u
        GROUP BY `c7`
      ) AS _ivm_on
    )
    SELECT `c8`, `c9`, `c11`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
    FROM (
      SELECT `c8`, `c9`, `c11`, CAST(1 AS BIGINT) * _ivm_side AS _ivm_weight
      FROM (
        SELECT _ivm_g.`c7` AS `c8`, coalesce(_ivm_g._ivm_count, 0) AS `c9`, CASE WHEN coalesce(_ivm_g.`c11_n`, 0) > 0 THEN CAST(_ivm_g.`c11_s` AS decimal(22,2)) END AS `c11`, coalesce(_ivm_g._ivm_count, 0) AS _ivm_count, _ivm_g._ivm_side
        FROM (
          SELECT * FROM (
            SELECT * FROM _ivm_gs
          ) AS r
          WHERE CASE WHEN r.`_ivm_count` <> 0 AND (r.`c11_n` <> r.`_ivm_count` OR CAST(r.`c11_s` AS decimal(22,2)) IS NULL) THEN CAST(raise_error('the target row of a group would not determine its state (a SUM with a NULL value, or one that overflowed)') AS BOOLEAN) ELSE TRUE END
        ) AS _ivm_g
        WHERE CASE WHEN _ivm_g._ivm_count < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a group would become negative)') AS BIGINT) ELSE _ivm_g._ivm_count END > 0
      ) AS _ivm_r
      WHERE CAST(1 AS BIGINT) > 0
    ) AS _ivm_x
    GROUP BY `c8`, `c9`, `c11`
    HAVING sum(_ivm_weight) <> 0
  ) AS t4
) AS _ivm_out;
-- the run stages every aggregate's child change once; then:
-- staged child change of agg0
SELECT `c7`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_count, coalesce(sum(`c10` * _ivm_weight), 0) AS `c11_s`, CAST(coalesce(sum(CASE WHEN `c10` IS NOT NULL THEN _ivm_weight END), 0) AS BIGINT) AS `c11_n`
FROM (
  SELECT c6 AS c7, c2 AS c10, _ivm_weight
  FROM (
    SELECT c1 AS c1, c2 AS c2, c4 AS c4, c6 AS c6, _ivm_weight
    FROM (
      SELECT /*+ BROADCAST(t1) */ t1.c1, t1.c2, t2.c4, t2.c6, t1._ivm_weight * t2._ivm_weight AS _ivm_weight
      FROM (
        SELECT `o_cust` AS c1, `o_total` AS c2, _ivm_weight
        FROM <shop.orders@delta>
      ) AS t1
      JOIN (
        SELECT `c_id` AS c4, `c_nation` AS c6, _ivm_weight
        FROM <shop.customers@old>
      ) AS t2
        ON (t1.c1 = t2.c4)
    ) AS t3
    UNION ALL
    SELECT c1 AS c1, c2 AS c2, c4 AS c4, c6 AS c6, _ivm_weight
    FROM (
      SELECT c1 AS c1, c2 AS c2, c4 AS c4, c6 AS c6, _ivm_weight
      FROM (
        SELECT /*+ BROADCAST(t4) */ t4.c4, t4.c6, t5.c1, t5.c2, t4._ivm_weight * t5._ivm_weight AS _ivm_weight
        FROM (
          SELECT `c_id` AS c4, `c_nation` AS c6, _ivm_weight
          FROM <shop.customers@delta>
        ) AS t4
        JOIN (
          SELECT `o_cust` AS c1, `o_total` AS c2, _ivm_weight
          FROM <shop.orders@new>
        ) AS t5
          ON (t5.c1 = t4.c4)
      ) AS t6
    ) AS t7
  ) AS t8
) AS _ivm_c
GROUP BY `c7`
HAVING count(*) > 0;
-- delta when shop.customers, shop.orders changed, reading the staged changes
SELECT c12 AS `c_nation`, c13 AS `orders`, c14 AS `revenue`, _ivm_weight
FROM (
  SELECT c8 AS c12, c9 AS c13, c11 AS c14, _ivm_weight
  FROM (
    WITH _ivm_d AS (
      SELECT * FROM <staged agg0>
    ),
    _ivm_p AS (
      SELECT * FROM _ivm_d
    ),
    _ivm_t AS (
      SELECT DISTINCT `c7` FROM _ivm_p
    ),
    _ivm_og AS (
      SELECT s.* FROM (SELECT t.`c_nation` AS `c7`, CAST(t.`orders` AS BIGINT) AS `_ivm_count`, t.`revenue` AS `c11_s`, CAST(t.`orders` AS BIGINT) AS `c11_n` FROM <state agg0.target> AS t) AS s LEFT SEMI JOIN _ivm_t AS t ON s.`c7` <=> t.`c7`
    ),
    _ivm_gs AS (
      SELECT `c7`, inline(array(named_struct('_ivm_count', `_ivm_old_count`, 'c11_s', `_ivm_old_c11_s`, 'c11_n', `_ivm_old_c11_n`, '_ivm_side', CAST(-1 AS BIGINT)), named_struct('_ivm_count', `_ivm_count`, 'c11_s', `c11_s`, 'c11_n', `c11_n`, '_ivm_side', CAST(1 AS BIGINT))))
      FROM (
        SELECT `c7`, CAST(sum(CASE WHEN _ivm_is_old THEN `_ivm_count` END) AS BIGINT) AS `_ivm_old_count`, CASE WHEN count(CASE WHEN _ivm_is_old THEN 1 END) = count(CASE WHEN _ivm_is_old THEN `c11_s` END) THEN sum(CASE WHEN _ivm_is_old THEN `c11_s` END) END AS `_ivm_old_c11_s`, CAST(sum(CASE WHEN _ivm_is_old THEN `c11_n` END) AS BIGINT) AS `_ivm_old_c11_n`, CAST(sum(`_ivm_count`) AS BIGINT) AS `_ivm_count`, CASE WHEN count(*) = count(`c11_s`) THEN sum(`c11_s`) END AS `c11_s`, CAST(sum(`c11_n`) AS BIGINT) AS `c11_n`
        FROM (
          SELECT `c7`, `_ivm_count`, `c11_s`, `c11_n`, TRUE AS _ivm_is_old FROM _ivm_og
          UNION ALL
          SELECT `c7`, `_ivm_count`, `c11_s`, `c11_n`, FALSE AS _ivm_is_old FROM _ivm_p
        ) AS _ivm_u
        GROUP BY `c7`
      ) AS _ivm_on
    )
    SELECT `c8`, `c9`, `c11`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
    FROM (
      SELECT `c8`, `c9`, `c11`, CAST(1 AS BIGINT) * _ivm_side AS _ivm_weight
      FROM (
        SELECT _ivm_g.`c7` AS `c8`, coalesce(_ivm_g._ivm_count, 0) AS `c9`, CASE WHEN coalesce(_ivm_g.`c11_n`, 0) > 0 THEN CAST(_ivm_g.`c11_s` AS decimal(22,2)) END AS `c11`, coalesce(_ivm_g._ivm_count, 0) AS _ivm_count, _ivm_g._ivm_side
        FROM (
          SELECT * FROM (
            SELECT * FROM _ivm_gs
          ) AS r
          WHERE CASE WHEN r.`_ivm_count` <> 0 AND (r.`c11_n` <> r.`_ivm_count` OR CAST(r.`c11_s` AS decimal(22,2)) IS NULL) THEN CAST(raise_error('the target row of a group would not determine its state (a SUM with a NULL value, or one that overflowed)') AS BOOLEAN) ELSE TRUE END
        ) AS _ivm_g
        WHERE CASE WHEN _ivm_g._ivm_count < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a group would become negative)') AS BIGINT) ELSE _ivm_g._ivm_count END > 0
      ) AS _ivm_r
      WHERE CAST(1 AS BIGINT) > 0
    ) AS _ivm_x
    GROUP BY `c8`, `c9`, `c11`
    HAVING sum(_ivm_weight) <> 0
  ) AS t1
) AS _ivm_out;
