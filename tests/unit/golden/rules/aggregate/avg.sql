-- Aggregate function: AVG(x) (ivm_core/rules/aggregate/functions/avg.py)
--
--   LINEAR over integers and decimals: the same _s and _n as SUM; result s / n when n > 0
--   VALUES over FLOAT/DOUBLE: the values re-added in sorted order, divided by their count
-- Cases: a model, the inputs that changed, the SQL of the model's change, and the state build
-- (see tests/unit/test_golden_rules.py; regenerate with UPDATE_GOLDEN=1 pytest tests/unit/test_golden_rules.py).

-- case: AVG over integers is a DOUBLE division
-- model: SELECT r.a, avg(r.b) AS m FROM db.r AS r GROUP BY r.a
-- changed: db.r
-- show: build
SELECT c6 AS `a`, c7 AS `m`, _ivm_weight
FROM (
  SELECT c3 AS c6, c5 AS c7, _ivm_weight
  FROM (
    WITH _ivm_d AS (
      SELECT c0 AS c2, c1 AS c4, _ivm_weight
      FROM (
        SELECT `a` AS c0, `b` AS c1, _ivm_weight
        FROM <db.r@delta>
      ) AS t1
    ),
    _ivm_p AS (
      SELECT `c2`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_count, coalesce(sum(`c4` * _ivm_weight), 0) AS `c5_s`, CAST(coalesce(sum(CASE WHEN `c4` IS NOT NULL THEN _ivm_weight END), 0) AS BIGINT) AS `c5_n`
      FROM (
        SELECT * FROM _ivm_d
      ) AS _ivm_c
      GROUP BY `c2`
      HAVING count(*) > 0
    ),
    _ivm_t AS (
      SELECT DISTINCT `c2` FROM _ivm_p
    ),
    _ivm_og AS (
      SELECT s.* FROM <state agg0.groups> AS s LEFT SEMI JOIN _ivm_t AS t ON s.`c2` <=> t.`c2`
    ),
    _ivm_gs AS (
      SELECT `c2`, inline(array(named_struct('_ivm_count', `_ivm_old_count`, 'c5_s', `_ivm_old_c5_s`, 'c5_n', `_ivm_old_c5_n`, '_ivm_side', CAST(-1 AS BIGINT)), named_struct('_ivm_count', `_ivm_count`, 'c5_s', `c5_s`, 'c5_n', `c5_n`, '_ivm_side', CAST(1 AS BIGINT))))
      FROM (
        SELECT `c2`, CAST(sum(CASE WHEN _ivm_is_old THEN `_ivm_count` END) AS BIGINT) AS `_ivm_old_count`, CASE WHEN count(CASE WHEN _ivm_is_old THEN 1 END) = count(CASE WHEN _ivm_is_old THEN `c5_s` END) THEN sum(CASE WHEN _ivm_is_old THEN `c5_s` END) END AS `_ivm_old_c5_s`, CAST(sum(CASE WHEN _ivm_is_old THEN `c5_n` END) AS BIGINT) AS `_ivm_old_c5_n`, CAST(sum(`_ivm_count`) AS BIGINT) AS `_ivm_count`, CASE WHEN count(*) = count(`c5_s`) THEN sum(`c5_s`) END AS `c5_s`, CAST(sum(`c5_n`) AS BIGINT) AS `c5_n`
        FROM (
          SELECT `c2`, `_ivm_count`, `c5_s`, `c5_n`, TRUE AS _ivm_is_old FROM _ivm_og
          UNION ALL
          SELECT `c2`, `_ivm_count`, `c5_s`, `c5_n`, FALSE AS _ivm_is_old FROM _ivm_p
        ) AS _ivm_u
        GROUP BY `c2`
      ) AS _ivm_on
    )
    SELECT `c3`, `c5`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
    FROM (
      SELECT `c3`, `c5`, CAST(1 AS BIGINT) * _ivm_side AS _ivm_weight
      FROM (
        SELECT _ivm_g.`c2` AS `c3`, CASE WHEN coalesce(_ivm_g.`c5_n`, 0) > 0 THEN CAST(_ivm_g.`c5_s` AS DOUBLE) / CAST(coalesce(_ivm_g.`c5_n`, 0) AS DOUBLE) END AS `c5`, coalesce(_ivm_g._ivm_count, 0) AS _ivm_count, _ivm_g._ivm_side
        FROM (
          SELECT * FROM _ivm_gs
        ) AS _ivm_g
        WHERE _ivm_g._ivm_count > 0
      ) AS _ivm_r
      WHERE CAST(1 AS BIGINT) > 0
    ) AS _ivm_x
    GROUP BY `c3`, `c5`
    HAVING sum(_ivm_weight) <> 0
  ) AS t2
) AS _ivm_out;
-- build of state agg0.groups
SELECT `c2`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_count, coalesce(sum(`c4` * _ivm_weight), 0) AS `c5_s`, CAST(coalesce(sum(CASE WHEN `c4` IS NOT NULL THEN _ivm_weight END), 0) AS BIGINT) AS `c5_n`
FROM (
  SELECT c0 AS c2, c1 AS c4, _ivm_weight
  FROM (
    SELECT `a` AS c0, `b` AS c1, _ivm_weight
    FROM <db.r@old>
  ) AS t1
) AS _ivm_c
GROUP BY `c2`
HAVING count(*) > 0;

-- case: AVG over decimals is computed in Spark's SUM type and cast to its AVG type
-- model: SELECT m.k, avg(m.p) AS m FROM db.m AS m GROUP BY m.k
-- changed: db.m
-- types: decimal
SELECT c7 AS `k`, c8 AS `m`, _ivm_weight
FROM (
  SELECT c4 AS c7, c6 AS c8, _ivm_weight
  FROM (
    WITH _ivm_d AS (
      SELECT c0 AS c3, c2 AS c5, _ivm_weight
      FROM (
        SELECT `k` AS c0, `p` AS c2, _ivm_weight
        FROM <db.m@delta>
      ) AS t1
    ),
    _ivm_p AS (
      SELECT `c3`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_count, CASE WHEN count(`c5`) = 0 THEN 0 WHEN count(CASE WHEN _ivm_weight = 1 THEN CAST(`c5` AS decimal(33,2)) WHEN _ivm_weight = -1 THEN -CAST(`c5` AS decimal(33,2)) ELSE `c5` * _ivm_weight END) = count(`c5`) THEN sum(CASE WHEN _ivm_weight = 1 THEN CAST(`c5` AS decimal(33,2)) WHEN _ivm_weight = -1 THEN -CAST(`c5` AS decimal(33,2)) ELSE `c5` * _ivm_weight END) END AS `c6_s`, CAST(coalesce(sum(CASE WHEN `c5` IS NOT NULL THEN _ivm_weight END), 0) AS BIGINT) AS `c6_n`
      FROM (
        SELECT * FROM _ivm_d
      ) AS _ivm_c
      GROUP BY `c3`
      HAVING count(*) > 0
    ),
    _ivm_t AS (
      SELECT DISTINCT `c3` FROM _ivm_p
    ),
    _ivm_og AS (
      SELECT s.* FROM <state agg0.groups> AS s LEFT SEMI JOIN _ivm_t AS t ON s.`c3` <=> t.`c3`
    ),
    _ivm_gs AS (
      SELECT `c3`, inline(array(named_struct('_ivm_count', `_ivm_old_count`, 'c6_s', `_ivm_old_c6_s`, 'c6_n', `_ivm_old_c6_n`, '_ivm_side', CAST(-1 AS BIGINT)), named_struct('_ivm_count', `_ivm_count`, 'c6_s', `c6_s`, 'c6_n', `c6_n`, '_ivm_side', CAST(1 AS BIGINT))))
      FROM (
        SELECT `c3`, CAST(sum(CASE WHEN _ivm_is_old THEN `_ivm_count` END) AS BIGINT) AS `_ivm_old_count`, CASE WHEN count(CASE WHEN _ivm_is_old THEN 1 END) = count(CASE WHEN _ivm_is_old THEN `c6_s` END) THEN sum(CASE WHEN _ivm_is_old THEN `c6_s` END) END AS `_ivm_old_c6_s`, CAST(sum(CASE WHEN _ivm_is_old THEN `c6_n` END) AS BIGINT) AS `_ivm_old_c6_n`, CAST(sum(`_ivm_count`) AS BIGINT) AS `_ivm_count`, CASE WHEN count(*) = count(`c6_s`) THEN sum(`c6_s`) END AS `c6_s`, CAST(sum(`c6_n`) AS BIGINT) AS `c6_n`
        FROM (
          SELECT `c3`, `_ivm_count`, `c6_s`, `c6_n`, TRUE AS _ivm_is_old FROM _ivm_og
          UNION ALL
          SELECT `c3`, `_ivm_count`, `c6_s`, `c6_n`, FALSE AS _ivm_is_old FROM _ivm_p
        ) AS _ivm_u
        GROUP BY `c3`
      ) AS _ivm_on
    )
    SELECT `c4`, `c6`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
    FROM (
      SELECT `c4`, `c6`, CAST(1 AS BIGINT) * _ivm_side AS _ivm_weight
      FROM (
        SELECT _ivm_g.`c3` AS `c4`, CASE WHEN coalesce(_ivm_g.`c6_n`, 0) > 0 THEN CAST(CAST(_ivm_g.`c6_s` AS decimal(22,2)) / CAST(coalesce(_ivm_g.`c6_n`, 0) AS DECIMAL(20,0)) AS decimal(16,6)) END AS `c6`, coalesce(_ivm_g._ivm_count, 0) AS _ivm_count, _ivm_g._ivm_side
        FROM (
          SELECT * FROM _ivm_gs
        ) AS _ivm_g
        WHERE _ivm_g._ivm_count > 0
      ) AS _ivm_r
      WHERE CAST(1 AS BIGINT) > 0
    ) AS _ivm_x
    GROUP BY `c4`, `c6`
    HAVING sum(_ivm_weight) <> 0
  ) AS t2
) AS _ivm_out;

-- case: AVG over doubles keeps the values
-- model: SELECT m.k, avg(m.x) AS m FROM db.m AS m GROUP BY m.k
-- changed: db.m
-- types: double
SELECT c7 AS `k`, c8 AS `m`, _ivm_weight
FROM (
  SELECT c4 AS c7, c6 AS c8, _ivm_weight
  FROM (
    WITH _ivm_d AS (
      SELECT c0 AS c3, c1 AS c5, _ivm_weight
      FROM (
        SELECT `k` AS c0, `x` AS c1, _ivm_weight
        FROM <db.m@delta>
      ) AS t1
    ),
    _ivm_p AS (
      SELECT `c3`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_count
      FROM (
        SELECT * FROM _ivm_d
      ) AS _ivm_c
      GROUP BY `c3`
      HAVING count(*) > 0
    ),
    _ivm_t AS (
      SELECT DISTINCT `c3` FROM _ivm_p
    ),
    _ivm_og AS (
      SELECT s.* FROM (SELECT `c3`, `_ivm_count` FROM <state agg0.states> WHERE _ivm_set = 0) AS s LEFT SEMI JOIN _ivm_t AS t ON s.`c3` <=> t.`c3`
    ),
    _ivm_gs AS (
      SELECT `c3`, inline(array(named_struct('_ivm_count', `_ivm_old_count`, '_ivm_side', CAST(-1 AS BIGINT)), named_struct('_ivm_count', `_ivm_count`, '_ivm_side', CAST(1 AS BIGINT))))
      FROM (
        SELECT `c3`, CAST(sum(CASE WHEN _ivm_is_old THEN `_ivm_count` END) AS BIGINT) AS `_ivm_old_count`, CAST(sum(`_ivm_count`) AS BIGINT) AS `_ivm_count`
        FROM (
          SELECT `c3`, `_ivm_count`, TRUE AS _ivm_is_old FROM _ivm_og
          UNION ALL
          SELECT `c3`, `_ivm_count`, FALSE AS _ivm_is_old FROM _ivm_p
        ) AS _ivm_u
        GROUP BY `c3`
      ) AS _ivm_on
    ),
    _ivm_ov0 AS (
      SELECT s.* FROM (SELECT `c3`, `_ivm_value__c5` AS `_ivm_value`, `_ivm_weight` FROM <state agg0.states> WHERE _ivm_set = 1) AS s LEFT SEMI JOIN _ivm_t AS t ON s.`c3` <=> t.`c3`
    ),
    _ivm_dv0 AS (
      SELECT `c3`, `c5` AS _ivm_value, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
      FROM (
        SELECT * FROM _ivm_d
      ) AS _ivm_c
      WHERE `c5` IS NOT NULL
      GROUP BY `c3`, `c5`
      HAVING sum(_ivm_weight) <> 0
    ),
    _ivm_sv0 AS (
      SELECT * FROM (
        SELECT `c3`, _ivm_value, inline(array(named_struct('_ivm_weight', `_ivm_old_weight`, '_ivm_side', CAST(-1 AS BIGINT)), named_struct('_ivm_weight', _ivm_weight, '_ivm_side', CAST(1 AS BIGINT))))
        FROM (
          SELECT `c3`, _ivm_value, CAST(sum(CASE WHEN _ivm_is_old THEN _ivm_weight END) AS BIGINT) AS `_ivm_old_weight`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
          FROM (
            SELECT `c3`, _ivm_value, _ivm_weight, TRUE AS _ivm_is_old FROM _ivm_ov0
            UNION ALL
            SELECT `c3`, _ivm_value, _ivm_weight, FALSE AS _ivm_is_old FROM _ivm_dv0
          ) AS _ivm_u
          GROUP BY `c3`, _ivm_value
        ) AS _ivm_on
      ) AS _ivm_s
      WHERE _ivm_weight <> 0
    )
    SELECT `c4`, `c6`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
    FROM (
      SELECT `c4`, `c6`, CAST(1 AS BIGINT) * _ivm_side AS _ivm_weight
      FROM (
        SELECT _ivm_g.`c3` AS `c4`, _ivm_v0._float_sum / CAST(_ivm_v0._float_n AS DOUBLE) AS `c6`, coalesce(_ivm_g._ivm_count, 0) AS _ivm_count, _ivm_g._ivm_side
        FROM (
          SELECT * FROM _ivm_gs
        ) AS _ivm_g
        LEFT JOIN (
        SELECT `c3`, _ivm_side, aggregate(array_sort(collect_list(CAST(_ivm_value AS DOUBLE) * CAST(_ivm_weight AS DOUBLE))), CAST(0 AS DOUBLE), (acc, x) -> acc + x) AS _float_sum, CAST(sum(_ivm_weight) AS BIGINT) AS _float_n
        FROM (
          SELECT * FROM _ivm_sv0
        ) AS _ivm_v
        GROUP BY `c3`, _ivm_side
        ) AS _ivm_v0 ON _ivm_g.`c3` <=> _ivm_v0.`c3` AND _ivm_g._ivm_side = _ivm_v0._ivm_side
        WHERE _ivm_g._ivm_count > 0
      ) AS _ivm_r
      WHERE CAST(1 AS BIGINT) > 0
    ) AS _ivm_x
    GROUP BY `c4`, `c6`
    HAVING sum(_ivm_weight) <> 0
  ) AS t2
) AS _ivm_out;
