-- model: SELECT c.c_nation, count(*) AS orders, sum(o.o_total) AS revenue, max(o.o_total) AS biggest FROM shop.orders o JOIN shop.customers c ON o.o_cust = c.c_id GROUP BY c.c_nation HAVING count(*) > 1
-- input shop.customers: columns ['c_id', 'c_nation'], join index: True
-- input shop.orders: columns ['o_cust', 'o_total'], join index: True
-- delta when shop.customers, shop.orders changed
SELECT c13 AS `c_nation`, c14 AS `orders`, c15 AS `revenue`, c16 AS `biggest`, _ivm_weight
FROM (
  SELECT c8 AS c13, c9 AS c14, c11 AS c15, c12 AS c16, _ivm_weight
  FROM (
    SELECT *
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
        SELECT s.* FROM (SELECT `c7`, `_ivm_count`, `c11_s`, `c11_n` FROM <state agg0.states> WHERE _ivm_set = 0) AS s LEFT SEMI JOIN _ivm_t AS t ON s.`c7` <=> t.`c7`
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
      ),
      _ivm_ov0 AS (
        SELECT s.* FROM (SELECT `c7`, `_ivm_value__c10` AS `_ivm_value`, `_ivm_weight` FROM <state agg0.states> WHERE _ivm_set = 1) AS s LEFT SEMI JOIN _ivm_t AS t ON s.`c7` <=> t.`c7`
      ),
      _ivm_dv0 AS (
        SELECT `c7`, `c10` AS _ivm_value, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
        FROM (
          SELECT * FROM _ivm_d
        ) AS _ivm_c
        WHERE `c10` IS NOT NULL
        GROUP BY `c7`, `c10`
        HAVING sum(_ivm_weight) <> 0
      ),
      _ivm_sv0 AS (
        SELECT * FROM (
          SELECT `c7`, _ivm_value, inline(array(named_struct('_ivm_weight', `_ivm_old_weight`, '_ivm_side', CAST(-1 AS BIGINT)), named_struct('_ivm_weight', _ivm_weight, '_ivm_side', CAST(1 AS BIGINT))))
          FROM (
            SELECT `c7`, _ivm_value, CAST(sum(CASE WHEN _ivm_is_old THEN _ivm_weight END) AS BIGINT) AS `_ivm_old_weight`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
            FROM (
              SELECT `c7`, _ivm_value, _ivm_weight, TRUE AS _ivm_is_old FROM _ivm_ov0
              UNION ALL
              SELECT `c7`, _ivm_value, _ivm_weight, FALSE AS _ivm_is_old FROM _ivm_dv0
            ) AS _ivm_u
            GROUP BY `c7`, _ivm_value
          ) AS _ivm_on
        ) AS _ivm_s
        WHERE _ivm_weight <> 0
      )
      SELECT `c8`, `c9`, `c11`, `c12`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
      FROM (
        SELECT `c8`, `c9`, `c11`, `c12`, CAST(1 AS BIGINT) * _ivm_side AS _ivm_weight
        FROM (
          SELECT _ivm_g.`c7` AS `c8`, coalesce(_ivm_g._ivm_count, 0) AS `c9`, CASE WHEN coalesce(_ivm_g.`c11_n`, 0) > 0 THEN CAST(_ivm_g.`c11_s` AS decimal(22,2)) END AS `c11`, _ivm_v0._max AS `c12`, coalesce(_ivm_g._ivm_count, 0) AS _ivm_count, _ivm_g._ivm_side
          FROM (
            SELECT * FROM _ivm_gs
          ) AS _ivm_g
          LEFT JOIN (
          SELECT `c7`, _ivm_side, max(_ivm_value) AS _max
          FROM (
            SELECT * FROM _ivm_sv0
          ) AS _ivm_v
          GROUP BY `c7`, _ivm_side
          ) AS _ivm_v0 ON _ivm_g.`c7` <=> _ivm_v0.`c7` AND _ivm_g._ivm_side = _ivm_v0._ivm_side
          WHERE _ivm_g._ivm_count > 0
        ) AS _ivm_r
        WHERE CAST(1 AS BIGINT) > 0
      ) AS _ivm_x
      GROUP BY `c8`, `c9`, `c11`, `c12`
      HAVING sum(_ivm_weight) <> 0
    ) AS t9
    WHERE (c9 > 1)
  ) AS t10
) AS _ivm_out;
-- delta when shop.customers changed
SELECT c13 AS `c_nation`, c14 AS `orders`, c15 AS `revenue`, c16 AS `biggest`, _ivm_weight
FROM (
  SELECT c8 AS c13, c9 AS c14, c11 AS c15, c12 AS c16, _ivm_weight
  FROM (
    SELECT *
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
        SELECT s.* FROM (SELECT `c7`, `_ivm_count`, `c11_s`, `c11_n` FROM <state agg0.states> WHERE _ivm_set = 0) AS s LEFT SEMI JOIN _ivm_t AS t ON s.`c7` <=> t.`c7`
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
      ),
      _ivm_ov0 AS (
        SELECT s.* FROM (SELECT `c7`, `_ivm_value__c10` AS `_ivm_value`, `_ivm_weight` FROM <state agg0.states> WHERE _ivm_set = 1) AS s LEFT SEMI JOIN _ivm_t AS t ON s.`c7` <=> t.`c7`
      ),
      _ivm_dv0 AS (
        SELECT `c7`, `c10` AS _ivm_value, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
        FROM (
          SELECT * FROM _ivm_d
        ) AS _ivm_c
        WHERE `c10` IS NOT NULL
        GROUP BY `c7`, `c10`
        HAVING sum(_ivm_weight) <> 0
      ),
      _ivm_sv0 AS (
        SELECT * FROM (
          SELECT `c7`, _ivm_value, inline(array(named_struct('_ivm_weight', `_ivm_old_weight`, '_ivm_side', CAST(-1 AS BIGINT)), named_struct('_ivm_weight', _ivm_weight, '_ivm_side', CAST(1 AS BIGINT))))
          FROM (
            SELECT `c7`, _ivm_value, CAST(sum(CASE WHEN _ivm_is_old THEN _ivm_weight END) AS BIGINT) AS `_ivm_old_weight`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
            FROM (
              SELECT `c7`, _ivm_value, _ivm_weight, TRUE AS _ivm_is_old FROM _ivm_ov0
              UNION ALL
              SELECT `c7`, _ivm_value, _ivm_weight, FALSE AS _ivm_is_old FROM _ivm_dv0
            ) AS _ivm_u
            GROUP BY `c7`, _ivm_value
          ) AS _ivm_on
        ) AS _ivm_s
        WHERE _ivm_weight <> 0
      )
      SELECT `c8`, `c9`, `c11`, `c12`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
      FROM (
        SELECT `c8`, `c9`, `c11`, `c12`, CAST(1 AS BIGINT) * _ivm_side AS _ivm_weight
        FROM (
          SELECT _ivm_g.`c7` AS `c8`, coalesce(_ivm_g._ivm_count, 0) AS `c9`, CASE WHEN coalesce(_ivm_g.`c11_n`, 0) > 0 THEN CAST(_ivm_g.`c11_s` AS decimal(22,2)) END AS `c11`, _ivm_v0._max AS `c12`, coalesce(_ivm_g._ivm_count, 0) AS _ivm_count, _ivm_g._ivm_side
          FROM (
            SELECT * FROM _ivm_gs
          ) AS _ivm_g
          LEFT JOIN (
          SELECT `c7`, _ivm_side, max(_ivm_value) AS _max
          FROM (
            SELECT * FROM _ivm_sv0
          ) AS _ivm_v
          GROUP BY `c7`, _ivm_side
          ) AS _ivm_v0 ON _ivm_g.`c7` <=> _ivm_v0.`c7` AND _ivm_g._ivm_side = _ivm_v0._ivm_side
          WHERE _ivm_g._ivm_count > 0
        ) AS _ivm_r
        WHERE CAST(1 AS BIGINT) > 0
      ) AS _ivm_x
      GROUP BY `c8`, `c9`, `c11`, `c12`
      HAVING sum(_ivm_weight) <> 0
    ) AS t5
    WHERE (c9 > 1)
  ) AS t6
) AS _ivm_out;
-- delta when shop.orders changed
SELECT c13 AS `c_nation`, c14 AS `orders`, c15 AS `revenue`, c16 AS `biggest`, _ivm_weight
FROM (
  SELECT c8 AS c13, c9 AS c14, c11 AS c15, c12 AS c16, _ivm_weight
  FROM (
    SELECT *
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
        SELECT s.* FROM (SELECT `c7`, `_ivm_count`, `c11_s`, `c11_n` FROM <state agg0.states> WHERE _ivm_set = 0) AS s LEFT SEMI JOIN _ivm_t AS t ON s.`c7` <=> t.`c7`
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
      ),
      _ivm_ov0 AS (
        SELECT s.* FROM (SELECT `c7`, `_ivm_value__c10` AS `_ivm_value`, `_ivm_weight` FROM <state agg0.states> WHERE _ivm_set = 1) AS s LEFT SEMI JOIN _ivm_t AS t ON s.`c7` <=> t.`c7`
      ),
      _ivm_dv0 AS (
        SELECT `c7`, `c10` AS _ivm_value, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
        FROM (
          SELECT * FROM _ivm_d
        ) AS _ivm_c
        WHERE `c10` IS NOT NULL
        GROUP BY `c7`, `c10`
        HAVING sum(_ivm_weight) <> 0
      ),
      _ivm_sv0 AS (
        SELECT * FROM (
          SELECT `c7`, _ivm_value, inline(array(named_struct('_ivm_weight', `_ivm_old_weight`, '_ivm_side', CAST(-1 AS BIGINT)), named_struct('_ivm_weight', _ivm_weight, '_ivm_side', CAST(1 AS BIGINT))))
          FROM (
            SELECT `c7`, _ivm_value, CAST(sum(CASE WHEN _ivm_is_old THEN _ivm_weight END) AS BIGINT) AS `_ivm_old_weight`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
            FROM (
              SELECT `c7`, _ivm_value, _ivm_weight, TRUE AS _ivm_is_old FROM _ivm_ov0
              UNION ALL
              SELECT `c7`, _ivm_value, _ivm_weight, FALSE AS _ivm_is_old FROM _ivm_dv0
            ) AS _ivm_u
            GROUP BY `c7`, _ivm_value
          ) AS _ivm_on
        ) AS _ivm_s
        WHERE _ivm_weight <> 0
      )
      SELECT `c8`, `c9`, `c11`, `c12`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
      FROM (
        SELECT `c8`, `c9`, `c11`, `c12`, CAST(1 AS BIGINT) * _ivm_side AS _ivm_weight
        FROM (
          SELECT _ivm_g.`c7` AS `c8`, coalesce(_ivm_g._ivm_count, 0) AS `c9`, CASE WHEN coalesce(_ivm_g.`c11_n`, 0) > 0 THEN CAST(_ivm_g.`c11_s` AS decimal(22,2)) END AS `c11`, _ivm_v0._max AS `c12`, coalesce(_ivm_g._ivm_count, 0) AS _ivm_count, _ivm_g._ivm_side
          FROM (
            SELECT * FROM _ivm_gs
          ) AS _ivm_g
          LEFT JOIN (
          SELECT `c7`, _ivm_side, max(_ivm_value) AS _max
          FROM (
            SELECT * FROM _ivm_sv0
          ) AS _ivm_v
          GROUP BY `c7`, _ivm_side
          ) AS _ivm_v0 ON _ivm_g.`c7` <=> _ivm_v0.`c7` AND _ivm_g._ivm_side = _ivm_v0._ivm_side
          WHERE _ivm_g._ivm_count > 0
        ) AS _ivm_r
        WHERE CAST(1 AS BIGINT) > 0
      ) AS _ivm_x
      GROUP BY `c8`, `c9`, `c11`, `c12`
      HAVING sum(_ivm_weight) <> 0
    ) AS t4
    WHERE (c9 > 1)
  ) AS t5
) AS _ivm_out;
-- the run stages every aggregate's child change once; then:
-- staged child change of agg0
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
) AS t8;
-- delta when shop.customers, shop.orders changed, reading the staged changes
SELECT c13 AS `c_nation`, c14 AS `orders`, c15 AS `revenue`, c16 AS `biggest`, _ivm_weight
FROM (
  SELECT c8 AS c13, c9 AS c14, c11 AS c15, c12 AS c16, _ivm_weight
  FROM (
    SELECT *
    FROM (
      WITH _ivm_d AS (
        SELECT * FROM <staged agg0>
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
        SELECT s.* FROM (SELECT `c7`, `_ivm_count`, `c11_s`, `c11_n` FROM <state agg0.states> WHERE _ivm_set = 0) AS s LEFT SEMI JOIN _ivm_t AS t ON s.`c7` <=> t.`c7`
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
      ),
      _ivm_ov0 AS (
        SELECT s.* FROM (SELECT `c7`, `_ivm_value__c10` AS `_ivm_value`, `_ivm_weight` FROM <state agg0.states> WHERE _ivm_set = 1) AS s LEFT SEMI JOIN _ivm_t AS t ON s.`c7` <=> t.`c7`
      ),
      _ivm_dv0 AS (
        SELECT `c7`, `c10` AS _ivm_value, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
        FROM (
          SELECT * FROM _ivm_d
        ) AS _ivm_c
        WHERE `c10` IS NOT NULL
        GROUP BY `c7`, `c10`
        HAVING sum(_ivm_weight) <> 0
      ),
      _ivm_sv0 AS (
        SELECT * FROM (
          SELECT `c7`, _ivm_value, inline(array(named_struct('_ivm_weight', `_ivm_old_weight`, '_ivm_side', CAST(-1 AS BIGINT)), named_struct('_ivm_weight', _ivm_weight, '_ivm_side', CAST(1 AS BIGINT))))
          FROM (
            SELECT `c7`, _ivm_value, CAST(sum(CASE WHEN _ivm_is_old THEN _ivm_weight END) AS BIGINT) AS `_ivm_old_weight`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
            FROM (
              SELECT `c7`, _ivm_value, _ivm_weight, TRUE AS _ivm_is_old FROM _ivm_ov0
              UNION ALL
              SELECT `c7`, _ivm_value, _ivm_weight, FALSE AS _ivm_is_old FROM _ivm_dv0
            ) AS _ivm_u
            GROUP BY `c7`, _ivm_value
          ) AS _ivm_on
        ) AS _ivm_s
        WHERE _ivm_weight <> 0
      )
      SELECT `c8`, `c9`, `c11`, `c12`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
      FROM (
        SELECT `c8`, `c9`, `c11`, `c12`, CAST(1 AS BIGINT) * _ivm_side AS _ivm_weight
        FROM (
          SELECT _ivm_g.`c7` AS `c8`, coalesce(_ivm_g._ivm_count, 0) AS `c9`, CASE WHEN coalesce(_ivm_g.`c11_n`, 0) > 0 THEN CAST(_ivm_g.`c11_s` AS decimal(22,2)) END AS `c11`, _ivm_v0._max AS `c12`, coalesce(_ivm_g._ivm_count, 0) AS _ivm_count, _ivm_g._ivm_side
          FROM (
            SELECT * FROM _ivm_gs
          ) AS _ivm_g
          LEFT JOIN (
          SELECT `c7`, _ivm_side, max(_ivm_value) AS _max
          FROM (
            SELECT * FROM _ivm_sv0
          ) AS _ivm_v
          GROUP BY `c7`, _ivm_side
          ) AS _ivm_v0 ON _ivm_g.`c7` <=> _ivm_v0.`c7` AND _ivm_g._ivm_side = _ivm_v0._ivm_side
          WHERE _ivm_g._ivm_count > 0
        ) AS _ivm_r
        WHERE CAST(1 AS BIGINT) > 0
      ) AS _ivm_x
      GROUP BY `c8`, `c9`, `c11`, `c12`
      HAVING sum(_ivm_weight) <> 0
    ) AS t1
    WHERE (c9 > 1)
  ) AS t2
) AS _ivm_out;
-- update of state agg0.groups
MERGE INTO <state agg0.states> AS s
USING (
  SELECT `c7`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_count, coalesce(sum(`c10` * _ivm_weight), 0) AS `c11_s`, CAST(coalesce(sum(CASE WHEN `c10` IS NOT NULL THEN _ivm_weight END), 0) AS BIGINT) AS `c11_n`
  FROM (
    SELECT * FROM <staged agg0>
  ) AS _ivm_c
  GROUP BY `c7`
  HAVING count(*) > 0
) AS d
ON s._ivm_set = 0 AND s.`c7` <=> d.`c7`
WHEN MATCHED AND s._ivm_count + d._ivm_count = 0 THEN DELETE
WHEN MATCHED THEN UPDATE SET s._ivm_count = CASE WHEN s._ivm_count + d._ivm_count < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a group would become negative)') AS BIGINT) ELSE s._ivm_count + d._ivm_count END, s.`c11_s` = s.`c11_s` + d.`c11_s`, s.`c11_n` = s.`c11_n` + d.`c11_n`
WHEN NOT MATCHED AND d._ivm_count <> 0 THEN INSERT (`c7`, `_ivm_set`, `_ivm_count`, `c11_s`, `c11_n`, `_ivm_value__c10`, `_ivm_weight`) VALUES (d.`c7`, 0, CASE WHEN d._ivm_count < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a group would become negative)') AS BIGINT) ELSE d._ivm_count END, d.`c11_s`, d.`c11_n`, NULL, NULL);
-- update of state agg0.values__c10
MERGE INTO <state agg0.states> AS s
USING (
  SELECT `c7`, `c10` AS _ivm_value, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
  FROM (
    SELECT * FROM <staged agg0>
  ) AS _ivm_c
  WHERE `c10` IS NOT NULL
  GROUP BY `c7`, `c10`
  HAVING sum(_ivm_weight) <> 0
) AS d
ON s._ivm_set = 1 AND s.`c7` <=> d.`c7` AND s.`_ivm_value__c10` <=> d.`_ivm_value`
WHEN MATCHED AND s._ivm_weight + d._ivm_weight = 0 THEN DELETE
WHEN MATCHED THEN UPDATE SET s._ivm_weight = CASE WHEN s._ivm_weight + d._ivm_weight < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a value would become negative)') AS BIGINT) ELSE s._ivm_weight + d._ivm_weight END
WHEN NOT MATCHED THEN INSERT (`c7`, `_ivm_set`, `_ivm_count`, `c11_s`, `c11_n`, `_ivm_value__c10`, `_ivm_weight`) VALUES (d.`c7`, 1, NULL, NULL, NULL, d.`_ivm_value`, CASE WHEN d._ivm_weight < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a value would become negative)') AS BIGINT) ELSE d._ivm_weight END);
-- rewrite of small state agg0.groups
INSERT OVERWRITE <state agg0.states> PARTITION (_ivm_set = 0) (`c7`, `_ivm_count`, `c11_s`, `c11_n`, `_ivm_value__c10`, `_ivm_weight`)
SELECT `c7` AS `c7`, `_ivm_count` AS `_ivm_count`, `c11_s` AS `c11_s`, `c11_n` AS `c11_n`, NULL AS `_ivm_value__c10`, NULL AS `_ivm_weight`
FROM (
  SELECT `c7`, CASE WHEN CAST(sum(`_ivm_count`) AS BIGINT) < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a group would become negative)') AS BIGINT) ELSE CAST(sum(`_ivm_count`) AS BIGINT) END AS `_ivm_count`, CASE WHEN count(*) = count(`c11_s`) THEN sum(`c11_s`) END AS `c11_s`, CAST(sum(`c11_n`) AS BIGINT) AS `c11_n`
  FROM (
    SELECT `c7`, `_ivm_count`, `c11_s`, `c11_n` FROM (SELECT `c7`, `_ivm_count`, `c11_s`, `c11_n` FROM <state agg0.states> WHERE _ivm_set = 0)
    UNION ALL
    SELECT `c7`, `_ivm_count`, `c11_s`, `c11_n` FROM (
      SELECT `c7`, CAST(_ivm_weight AS BIGINT) AS _ivm_count, coalesce(`c10` * _ivm_weight, 0) AS `c11_s`, coalesce(CASE WHEN `c10` IS NOT NULL THEN _ivm_weight END, 0) AS `c11_n`
      FROM (
        SELECT * FROM <staged agg0>
      ) AS _ivm_c
    ) AS d
  ) AS _ivm_u
  GROUP BY `c7`
  HAVING sum(_ivm_count) <> 0
) AS _ivm_rows;
-- rewrite of small state agg0.values__c10
INSERT OVERWRITE <state agg0.states> PARTITION (_ivm_set = 1) (`c7`, `_ivm_count`, `c11_s`, `c11_n`, `_ivm_value__c10`, `_ivm_weight`)
SELECT `c7` AS `c7`, NULL AS `_ivm_count`, NULL AS `c11_s`, NULL AS `c11_n`, `_ivm_value` AS `_ivm_value__c10`, `_ivm_weight` AS `_ivm_weight`
FROM (
  SELECT `c7`, _ivm_value, CASE WHEN CAST(sum(_ivm_weight) AS BIGINT) < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a value would become negative)') AS BIGINT) ELSE CAST(sum(_ivm_weight) AS BIGINT) END AS _ivm_weight
  FROM (
    SELECT `c7`, _ivm_value, _ivm_weight FROM (SELECT `c7`, `_ivm_value__c10` AS `_ivm_value`, `_ivm_weight` FROM <state agg0.states> WHERE _ivm_set = 1)
    UNION ALL
    SELECT `c7`, _ivm_value, _ivm_weight FROM (
      SELECT `c7`, `c10` AS _ivm_value, CAST(_ivm_weight AS BIGINT) AS _ivm_weight
      FROM (
        SELECT * FROM <staged agg0>
      ) AS _ivm_c
      WHERE `c10` IS NOT NULL
    ) AS d
  ) AS _ivm_u
  GROUP BY `c7`, _ivm_value
  HAVING sum(_ivm_weight) <> 0
) AS _ivm_rows;
-- update in two passes of large state agg0.groups
MERGE INTO <live agg0.states> AS s
USING (
  SELECT /*+ BROADCAST(_ivm_d) */ * FROM (
    SELECT `c7`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_count, coalesce(sum(`c10` * _ivm_weight), 0) AS `c11_s`, CAST(coalesce(sum(CASE WHEN `c10` IS NOT NULL THEN _ivm_weight END), 0) AS BIGINT) AS `c11_n`
    FROM (
      SELECT * FROM <staged agg0>
    ) AS _ivm_c
    GROUP BY `c7`
    HAVING count(*) > 0
  ) AS _ivm_d
) AS d
ON s._ivm_set = 0 AND s.`c7` <=> d.`c7`
WHEN MATCHED AND s._ivm_count + d._ivm_count = 0 THEN DELETE
WHEN MATCHED THEN UPDATE SET s._ivm_count = CASE WHEN s._ivm_count + d._ivm_count < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a group would become negative)') AS BIGINT) ELSE s._ivm_count + d._ivm_count END, s.`c11_s` = s.`c11_s` + d.`c11_s`, s.`c11_n` = s.`c11_n` + d.`c11_n`;
-- update in two passes of large state agg0.groups
WITH _ivm_src AS (
  SELECT `c7`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_count, coalesce(sum(`c10` * _ivm_weight), 0) AS `c11_s`, CAST(coalesce(sum(CASE WHEN `c10` IS NOT NULL THEN _ivm_weight END), 0) AS BIGINT) AS `c11_n`
  FROM (
    SELECT * FROM <staged agg0>
  ) AS _ivm_c
  GROUP BY `c7`
  HAVING count(*) > 0
)
INSERT INTO <live agg0.states> (`c7`, `_ivm_set`, `_ivm_count`, `c11_s`, `c11_n`, `_ivm_value__c10`, `_ivm_weight`)
SELECT /*+ BROADCAST(h) */ d.`c7`, 0, CASE WHEN d._ivm_count < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a group would become negative)') AS BIGINT) ELSE d._ivm_count END, d.`c11_s`, d.`c11_n`, NULL, NULL FROM _ivm_src AS d
LEFT JOIN (
  SELECT /*+ BROADCAST(k) */ s.`c7`, TRUE AS _ivm_held FROM (SELECT `c7`, `_ivm_count`, `c11_s`, `c11_n` FROM <state agg0.states> WHERE _ivm_set = 0) AS s
  LEFT SEMI JOIN (SELECT `c7` FROM _ivm_src) AS k ON s.`c7` <=> k.`c7`
) AS h ON d.`c7` <=> h.`c7`
WHERE CASE WHEN h._ivm_held THEN FALSE ELSE d._ivm_count <> 0 END;
-- update in two passes of large state agg0.values__c10
MERGE INTO <live agg0.states> AS s
USING (
  SELECT /*+ BROADCAST(_ivm_d) */ * FROM (
    SELECT `c7`, `c10` AS _ivm_value, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
    FROM (
      SELECT * FROM <staged agg0>
    ) AS _ivm_c
    WHERE `c10` IS NOT NULL
    GROUP BY `c7`, `c10`
    HAVING sum(_ivm_weight) <> 0
  ) AS _ivm_d
) AS d
ON s._ivm_set = 1 AND s.`c7` <=> d.`c7` AND s.`_ivm_value__c10` <=> d.`_ivm_value`
WHEN MATCHED AND s._ivm_weight + d._ivm_weight = 0 THEN DELETE
WHEN MATCHED THEN UPDATE SET s._ivm_weight = CASE WHEN s._ivm_weight + d._ivm_weight < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a value would become negative)') AS BIGINT) ELSE s._ivm_weight + d._ivm_weight END;
-- update in two passes of large state agg0.values__c10
WITH _ivm_src AS (
  SELECT `c7`, `c10` AS _ivm_value, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
  FROM (
    SELECT * FROM <staged agg0>
  ) AS _ivm_c
  WHERE `c10` IS NOT NULL
  GROUP BY `c7`, `c10`
  HAVING sum(_ivm_weight) <> 0
)
INSERT INTO <live agg0.states> (`c7`, `_ivm_set`, `_ivm_count`, `c11_s`, `c11_n`, `_ivm_value__c10`, `_ivm_weight`)
SELECT /*+ BROADCAST(h) */ d.`c7`, 1, NULL, NULL, NULL, d.`_ivm_value`, CASE WHEN d._ivm_weight < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a value would become negative)') AS BIGINT) ELSE d._ivm_weight END FROM _ivm_src AS d
LEFT JOIN (
  SELECT /*+ BROADCAST(k) */ s.`c7`, s.`_ivm_value`, TRUE AS _ivm_held FROM (SELECT `c7`, `_ivm_value__c10` AS `_ivm_value`, `_ivm_weight` FROM <state agg0.states> WHERE _ivm_set = 1) AS s
  LEFT SEMI JOIN (SELECT `c7`, `_ivm_value` FROM _ivm_src) AS k ON s.`c7` <=> k.`c7` AND s.`_ivm_value` <=> k.`_ivm_value`
) AS h ON d.`c7` <=> h.`c7` AND d.`_ivm_value` <=> h.`_ivm_value`
WHERE CASE WHEN h._ivm_held THEN FALSE ELSE TRUE END;
