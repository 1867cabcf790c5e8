-- Aggregate function: AVG(DISTINCT x) (ivm_core/rules/aggregate/functions/avg_distinct.py)
--
--   DISTINCT over integers and decimals: AVG's _s and _n over the group's distinct values (as SUM(DISTINCT));
--   result s / n in Spark's AVG type when n > 0
--   VALUES over FLOAT/DOUBLE: the group's values with their weights; result Spark's avg over them
-- Cases: a model, the inputs that changed, the SQL of the model's change, and the state build
-- (see tests/unit/test_golden_rules.py; regenerate with UPDATE_GOLDEN=1 pytest tests/unit/test_golden_rules.py).

-- case: AVG(DISTINCT) over integers divides the distinct values' sum by their count
-- model: SELECT r.a, avg(DISTINCT r.b) AS ad FROM db.r AS r GROUP BY r.a
-- changed: db.r
-- show: build, merge
SELECT c6 AS `a`, c7 AS `ad`, _ivm_weight
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
    _ivm_rp AS (
      SELECT `c2`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_count
      FROM (
        SELECT * FROM _ivm_d
      ) AS _ivm_c
      GROUP BY `c2`
      HAVING count(*) > 0
    ),
    _ivm_t AS (
      SELECT DISTINCT `c2` FROM _ivm_rp
    ),
    _ivm_dv0 AS (
      SELECT `c2`, `c4` AS _ivm_value, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
      FROM (
        SELECT * FROM _ivm_d
      ) AS _ivm_c
      WHERE `c4` IS NOT NULL
      GROUP BY `c2`, `c4`
      HAVING sum(_ivm_weight) <> 0
    ),
    _ivm_ov0 AS (
      SELECT s.* FROM (SELECT `c2`, `_ivm_value__c4` AS `_ivm_value`, `_ivm_weight` FROM <state agg0.states> WHERE _ivm_set = 1) AS s
      LEFT SEMI JOIN (
        SELECT * FROM _ivm_dv0
      ) AS d ON s.`c2` <=> d.`c2` AND s.`_ivm_value` <=> d.`_ivm_value`
    ),
    _ivm_dp0 AS (
      SELECT `c2`, coalesce(sum(_ivm_value * _ivm_weight), 0) AS `c5_s`, CAST(coalesce(sum(_ivm_weight), 0) AS BIGINT) AS `c5_n`
      FROM (
        SELECT `c2`, _ivm_value, CAST(CASE WHEN sum(_ivm_was) <= 0 AND sum(_ivm_now) > 0 THEN 1 WHEN sum(_ivm_was) > 0 AND sum(_ivm_now) <= 0 THEN -1 ELSE 0 END AS BIGINT) AS _ivm_weight
        FROM (
          SELECT `c2`, _ivm_value, _ivm_weight AS _ivm_was, _ivm_weight AS _ivm_now FROM (
            SELECT * FROM _ivm_ov0
          ) AS _ivm_ov
          UNION ALL
          SELECT `c2`, _ivm_value, CAST(0 AS BIGINT) AS _ivm_was, _ivm_weight AS _ivm_now FROM (
            SELECT * FROM _ivm_dv0
          ) AS _ivm_dv
        ) AS _ivm_u
        GROUP BY `c2`, _ivm_value
      ) AS _ivm_x
      GROUP BY `c2`
    ),
    _ivm_p AS (
      SELECT p.*, coalesce(_ivm_x0.`c5_s`, 0) AS `c5_s`, coalesce(_ivm_x0.`c5_n`, 0) AS `c5_n`
      FROM (
        SELECT * FROM _ivm_rp
      ) AS p
      LEFT JOIN (
        SELECT * FROM _ivm_dp0
      ) AS _ivm_x0 ON p.`c2` <=> _ivm_x0.`c2`
    ),
    _ivm_og AS (
      SELECT s.* FROM (SELECT `c2`, `_ivm_count`, `c5_s`, `c5_n` FROM <state agg0.states> WHERE _ivm_set = 0) AS s LEFT SEMI JOIN _ivm_t AS t ON s.`c2` <=> t.`c2`
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
-- build of state agg0.states
WITH _ivm_child AS (
  SELECT c0 AS c2, c1 AS c4, _ivm_weight
  FROM (
    SELECT `a` AS c0, `b` AS c1, _ivm_weight
    FROM <db.r@old>
  ) AS t1
),
_ivm_values0 AS (
  SELECT `c2`, `c4` AS _ivm_value, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
  FROM (
    SELECT * FROM _ivm_child
  ) AS _ivm_c
  WHERE `c4` IS NOT NULL
  GROUP BY `c2`, `c4`
  HAVING sum(_ivm_weight) <> 0
)
SELECT `c2` AS `c2`, 0 AS `_ivm_set`, `_ivm_count` AS `_ivm_count`, `c5_s` AS `c5_s`, `c5_n` AS `c5_n`, NULL AS `_ivm_value__c4`, NULL AS `_ivm_weight`
FROM (
  SELECT p.*, coalesce(_ivm_x0.`c5_s`, 0) AS `c5_s`, coalesce(_ivm_x0.`c5_n`, 0) AS `c5_n`
  FROM (
    SELECT `c2`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_count
    FROM (
      SELECT * FROM _ivm_child
    ) AS _ivm_c
    GROUP BY `c2`
    HAVING count(*) > 0
  ) AS p
  LEFT JOIN (
    SELECT `c2`, coalesce(sum(_ivm_value * _ivm_weight), 0) AS `c5_s`, CAST(coalesce(sum(_ivm_weight), 0) AS BIGINT) AS `c5_n`
    FROM (
      SELECT `c2`, _ivm_value, CAST(1 AS BIGINT) AS _ivm_weight
      FROM _ivm_values0
      WHERE _ivm_weight > 0
    ) AS _ivm_x
    GROUP BY `c2`
  ) AS _ivm_x0 ON p.`c2` <=> _ivm_x0.`c2`
) AS _ivm_rows
UNION ALL
SELECT `c2` AS `c2`, 1 AS `_ivm_set`, NULL AS `_ivm_count`, NULL AS `c5_s`, NULL AS `c5_n`, `_ivm_value` AS `_ivm_value__c4`, `_ivm_weight` AS `_ivm_weight`
FROM (
  SELECT * FROM _ivm_values0
) AS _ivm_rows;
-- update of state agg0.groups
MERGE INTO <state agg0.states> AS s
USING (
  SELECT p.*, coalesce(_ivm_x0.`c5_s`, 0) AS `c5_s`, coalesce(_ivm_x0.`c5_n`, 0) AS `c5_n`
  FROM (
    SELECT `c2`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_count
    FROM (
      SELECT c0 AS c2, c1 AS c4, _ivm_weight
      FROM (
        SELECT `a` AS c0, `b` AS c1, _ivm_weight
        FROM <db.r@delta>
      ) AS t1
    ) AS _ivm_c
    GROUP BY `c2`
    HAVING count(*) > 0
  ) AS p
  LEFT JOIN (
    SELECT `c2`, coalesce(sum(_ivm_value * _ivm_weight), 0) AS `c5_s`, CAST(coalesce(sum(_ivm_weight), 0) AS BIGINT) AS `c5_n`
    FROM (
      SELECT `c2`, _ivm_value, CAST(CASE WHEN sum(_ivm_now) < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a value would become negative)') AS BIGINT) WHEN sum(_ivm_was) <= 0 AND sum(_ivm_now) > 0 THEN 1 WHEN sum(_ivm_was) > 0 AND sum(_ivm_now) <= 0 THEN -1 ELSE 0 END AS BIGINT) AS _ivm_weight
      FROM (
        SELECT `c2`, _ivm_value, _ivm_weight AS _ivm_was, _ivm_weight AS _ivm_now FROM (
          SELECT s.* FROM (SELECT `c2`, `_ivm_value__c4` AS `_ivm_value`, `_ivm_weight` FROM <state agg0.states> WHERE _ivm_set = 1) AS s
          LEFT SEMI JOIN (
            SELECT `c2`, `c4` AS _ivm_value, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
            FROM (
              SELECT c0 AS c2, c1 AS c4, _ivm_weight
              FROM (
                SELECT `a` AS c0, `b` AS c1, _ivm_weight
                FROM <db.r@delta>
              ) AS t1
            ) AS _ivm_c
            WHERE `c4` IS NOT NULL
            GROUP BY `c2`, `c4`
            HAVING sum(_ivm_weight) <> 0
          ) AS d ON s.`c2` <=> d.`c2` AND s.`_ivm_value` <=> d.`_ivm_value`
        ) AS _ivm_ov
        UNION ALL
        SELECT `c2`, _ivm_value, CAST(0 AS BIGINT) AS _ivm_was, _ivm_weight AS _ivm_now FROM (
          SELECT `c2`, `c4` AS _ivm_value, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
          FROM (
            SELECT c0 AS c2, c1 AS c4, _ivm_weight
            FROM (
              SELECT `a` AS c0, `b` AS c1, _ivm_weight
              FROM <db.r@delta>
            ) AS t1
          ) AS _ivm_c
          WHERE `c4` IS NOT NULL
          GROUP BY `c2`, `c4`
          HAVING sum(_ivm_weight) <> 0
        ) AS _ivm_dv
      ) AS _ivm_u
      GROUP BY `c2`, _ivm_value
    ) AS _ivm_x
    GROUP BY `c2`
  ) AS _ivm_x0 ON p.`c2` <=> _ivm_x0.`c2`
) AS d
ON s._ivm_set = 0 AND s.`c2` <=> d.`c2`
WHEN MATCHED AND s._ivm_count + d._ivm_count = 0 THEN DELETE
WHEN MATCHED THEN UPDATE SET s._ivm_count = CASE WHEN s._ivm_count + d._ivm_count < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a group would become negative)') AS BIGINT) ELSE s._ivm_count + d._ivm_count END, s.`c5_s` = s.`c5_s` + d.`c5_s`, s.`c5_n` = s.`c5_n` + d.`c5_n`
WHEN NOT MATCHED AND d._ivm_count <> 0 THEN INSERT (`c2`, `_ivm_set`, `_ivm_count`, `c5_s`, `c5_n`, `_ivm_value__c4`, `_ivm_weight`) VALUES (d.`c2`, 0, CASE WHEN d._ivm_count < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a group would become negative)') AS BIGINT) ELSE d._ivm_count END, d.`c5_s`, d.`c5_n`, NULL, NULL);
-- update of state agg0.values__c4
MERGE INTO <state agg0.states> AS s
USING (
  SELECT `c2`, `c4` AS _ivm_value, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
  FROM (
    SELECT c0 AS c2, c1 AS c4, _ivm_weight
    FROM (
      SELECT `a` AS c0, `b` AS c1, _ivm_weight
      FROM <db.r@delta>
    ) AS t1
  ) AS _ivm_c
  WHERE `c4` IS NOT NULL
  GROUP BY `c2`, `c4`
  HAVING sum(_ivm_weight) <> 0
) AS d
ON s._ivm_set = 1 AND s.`c2` <=> d.`c2` AND s.`_ivm_value__c4` <=> d.`_ivm_value`
WHEN MATCHED AND s._ivm_weight + d._ivm_weight = 0 THEN DELETE
WHEN MATCHED THEN UPDATE SET s._ivm_weight = CASE WHEN s._ivm_weight + d._ivm_weight < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a value would become negative)') AS BIGINT) ELSE s._ivm_weight + d._ivm_weight END
WHEN NOT MATCHED THEN INSERT (`c2`, `_ivm_set`, `_ivm_count`, `c5_s`, `c5_n`, `_ivm_value__c4`, `_ivm_weight`) VALUES (d.`c2`, 1, NULL, NULL, NULL, d.`_ivm_value`, CASE WHEN d._ivm_weight < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a value would become negative)') AS BIGINT) ELSE d._ivm_weight END);

-- case: AVG(DISTINCT) over a decimal, in Spark's AVG type
-- model: SELECT m.k, avg(DISTINCT m.p) AS ad FROM db.m AS m GROUP BY m.k
-- changed: db.m
-- types: decimal
SELECT c7 AS `k`, c8 AS `ad`, _ivm_weight
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
    _ivm_rp AS (
      SELECT `c3`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_count
      FROM (
        SELECT * FROM _ivm_d
      ) AS _ivm_c
      GROUP BY `c3`
      HAVING count(*) > 0
    ),
    _ivm_t AS (
      SELECT DISTINCT `c3` FROM _ivm_rp
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
    _ivm_ov0 AS (
      SELECT s.* FROM (SELECT `c3`, `_ivm_value__c5` AS `_ivm_value`, `_ivm_weight` FROM <state agg0.states> WHERE _ivm_set = 1) AS s
      LEFT SEMI JOIN (
        SELECT * FROM _ivm_dv0
      ) AS d ON s.`c3` <=> d.`c3` AND s.`_ivm_value` <=> d.`_ivm_value`
    ),
    _ivm_dp0 AS (
      SELECT `c3`, CASE WHEN count(_ivm_value) = 0 THEN 0 WHEN count(CASE WHEN _ivm_weight = 1 THEN CAST(_ivm_value AS decimal(33,2)) WHEN _ivm_weight = -1 THEN -CAST(_ivm_value AS decimal(33,2)) ELSE _ivm_value * _ivm_weight END) = count(_ivm_value) THEN sum(CASE WHEN _ivm_weight = 1 THEN CAST(_ivm_value AS decimal(33,2)) WHEN _ivm_weight = -1 THEN -CAST(_ivm_value AS decimal(33,2)) ELSE _ivm_value * _ivm_weight END) END AS `c6_s`, CAST(coalesce(sum(_ivm_weight), 0) AS BIGINT) AS `c6_n`
      FROM (
        SELECT `c3`, _ivm_value, CAST(CASE WHEN sum(_ivm_was) <= 0 AND sum(_ivm_now) > 0 THEN 1 WHEN sum(_ivm_was) > 0 AND sum(_ivm_now) <= 0 THEN -1 ELSE 0 END AS BIGINT) AS _ivm_weight
        FROM (
          SELECT `c3`, _ivm_value, _ivm_weight AS _ivm_was, _ivm_weight AS _ivm_now FROM (
            SELECT * FROM _ivm_ov0
          ) AS _ivm_ov
          UNION ALL
          SELECT `c3`, _ivm_value, CAST(0 AS BIGINT) AS _ivm_was, _ivm_weight AS _ivm_now FROM (
            SELECT * FROM _ivm_dv0
          ) AS _ivm_dv
        ) AS _ivm_u
        GROUP BY `c3`, _ivm_value
      ) AS _ivm_x
      GROUP BY `c3`
    ),
    _ivm_p AS (
      SELECT p.*, coalesce(_ivm_x0.`c6_s`, 0) AS `c6_s`, coalesce(_ivm_x0.`c6_n`, 0) AS `c6_n`
      FROM (
        SELECT * FROM _ivm_rp
      ) AS p
      LEFT JOIN (
        SELECT * FROM _ivm_dp0
      ) AS _ivm_x0 ON p.`c3` <=> _ivm_x0.`c3`
    ),
    _ivm_og AS (
      SELECT s.* FROM (SELECT `c3`, `_ivm_count`, `c6_s`, `c6_n` FROM <state agg0.states> WHERE _ivm_set = 0) AS s LEFT SEMI JOIN _ivm_t AS t ON s.`c3` <=> t.`c3`
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

-- case: AVG(DISTINCT) over a DOUBLE is Spark's AVG over the stored values of the touched groups
-- model: SELECT m.k, avg(DISTINCT m.x) AS ad FROM db.m AS m GROUP BY m.k
-- changed: db.m
-- types: double
SELECT c7 AS `k`, c8 AS `ad`, _ivm_weight
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
        SELECT _ivm_g.`c3` AS `c4`, _ivm_v0._avg AS `c6`, coalesce(_ivm_g._ivm_count, 0) AS _ivm_count, _ivm_g._ivm_side
        FROM (
          SELECT * FROM _ivm_gs
        ) AS _ivm_g
        LEFT JOIN (
        SELECT `c3`, _ivm_side, avg(_ivm_value) AS _avg
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
