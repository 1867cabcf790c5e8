-- Aggregate function: COUNT(DISTINCT x) (ivm_core/rules/aggregate/functions/count_distinct.py)
--
--   DISTINCT: COUNT's _n over the group's distinct values: += 1 when a value's net weight in the value
--   state rises from 0, -= 1 when it falls to 0 (the value state read only at the change's values); result n
-- Cases: a model, the inputs that changed, the SQL of the model's change, and the state build
-- (see tests/unit/test_golden_rules.py; regenerate with UPDATE_GOLDEN=1 pytest tests/unit/test_golden_rules.py).

-- case: COUNT(DISTINCT x) counts the values whose weight crosses zero
-- model: SELECT r.a, count(DISTINCT r.b) AS d FROM db.r AS r GROUP BY r.a
-- changed: db.r
-- show: build, merge, rewrite
SELECT c6 AS `a`, c7 AS `d`, _ivm_weight
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
      SELECT `c2`, CAST(0 AS BIGINT) AS `c5_s`, CAST(coalesce(sum(_ivm_weight), 0) AS BIGINT) AS `c5_n`
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
        SELECT _ivm_g.`c2` AS `c3`, coalesce(_ivm_g.`c5_n`, 0) AS `c5`, coalesce(_ivm_g._ivm_count, 0) AS _ivm_count, _ivm_g._ivm_side
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
    SELECT `c2`, CAST(0 AS BIGINT) AS `c5_s`, CAST(coalesce(sum(_ivm_weight), 0) AS BIGINT) AS `c5_n`
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
    SELECT `c2`, CAST(0 AS BIGINT) AS `c5_s`, CAST(coalesce(sum(_ivm_weight), 0) AS BIGINT) AS `c5_n`
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
INSERT INTO <state agg0.states> (`c2`, `_ivm_set`, `_ivm_count`, `c5_s`, `c5_n`, `_ivm_value__c4`, `_ivm_weight`)
SELECT `c2` AS `c2`, 1 AS `_ivm_set`, NULL AS `_ivm_count`, NULL AS `c5_s`, NULL AS `c5_n`, `_ivm_value` AS `_ivm_value__c4`, `_ivm_weight` AS `_ivm_weight`
FROM (
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
) AS _ivm_rows;
-- rewrite of small state agg0.groups
INSERT OVERWRITE <state agg0.states> PARTITION (_ivm_set = 0) (`c2`, `_ivm_count`, `c5_s`, `c5_n`, `_ivm_value__c4`, `_ivm_weight`)
SELECT `c2` AS `c2`, `_ivm_count` AS `_ivm_count`, `c5_s` AS `c5_s`, `c5_n` AS `c5_n`, NULL AS `_ivm_value__c4`, NULL AS `_ivm_weight`
FROM (
  SELECT `c2`, CASE WHEN CAST(sum(`_ivm_count`) AS BIGINT) < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a group would become negative)') AS BIGINT) ELSE CAST(sum(`_ivm_count`) AS BIGINT) END AS `_ivm_count`, CASE WHEN count(*) = count(`c5_s`) THEN sum(`c5_s`) END AS `c5_s`, CAST(sum(`c5_n`) AS BIGINT) AS `c5_n`
  FROM (
    SELECT `c2`, `_ivm_count`, `c5_s`, `c5_n` FROM (SELECT `c2`, `_ivm_count`, `c5_s`, `c5_n` FROM <state agg0.states> WHERE _ivm_set = 0)
    UNION ALL
    SELECT `c2`, `_ivm_count`, `c5_s`, `c5_n` FROM (
      SELECT `c2`, _ivm_count, CAST(0 AS BIGINT) AS `c5_s`, CAST(0 AS BIGINT) AS `c5_n`
      FROM (
        SELECT `c2`, CAST(_ivm_weight AS BIGINT) AS _ivm_count
        FROM (
          SELECT c0 AS c2, c1 AS c4, _ivm_weight
          FROM (
            SELECT `a` AS c0, `b` AS c1, _ivm_weight
            FROM <db.r@delta>
          ) AS t1
        ) AS _ivm_c
      ) AS _ivm_rp
      UNION ALL
      SELECT `c2`, CAST(0 AS BIGINT) AS _ivm_count, coalesce(CAST(0 AS BIGINT), 0) AS `c5_s`, _ivm_weight AS `c5_n`
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
    ) AS d
  ) AS _ivm_u
  GROUP BY `c2`
  HAVING sum(_ivm_count) <> 0
) AS _ivm_rows;
-- rewrite of small state agg0.values__c4
INSERT OVERWRITE <state agg0.states> PARTITION (_ivm_set = 1) (`c2`, `_ivm_count`, `c5_s`, `c5_n`, `_ivm_value__c4`, `_ivm_weight`)
SELECT `c2` AS `c2`, NULL AS `_ivm_count`, NULL AS `c5_s`, NULL AS `c5_n`, `_ivm_value` AS `_ivm_value__c4`, `_ivm_weight` AS `_ivm_weight`
FROM (
  SELECT `c2`, _ivm_value, CASE WHEN CAST(sum(_ivm_weight) AS BIGINT) < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a value would become negative)') AS BIGINT) ELSE CAST(sum(_ivm_weight) AS BIGINT) END AS _ivm_weight
  FROM (
    SELECT `c2`, _ivm_value, _ivm_weight FROM (SELECT `c2`, `_ivm_value__c4` AS `_ivm_value`, `_ivm_weight` FROM <state agg0.states> WHERE _ivm_set = 1)
    UNION ALL
    SELECT `c2`, _ivm_value, _ivm_weight FROM (
      SELECT `c2`, `c4` AS _ivm_value, CAST(_ivm_weight AS BIGINT) AS _ivm_weight
      FROM (
        SELECT c0 AS c2, c1 AS c4, _ivm_weight
        FROM (
          SELECT `a` AS c0, `b` AS c1, _ivm_weight
          FROM <db.r@delta>
        ) AS t1
      ) AS _ivm_c
      WHERE `c4` IS NOT NULL
    ) AS d
  ) AS _ivm_u
  GROUP BY `c2`, _ivm_value
  HAVING sum(_ivm_weight) <> 0
) AS _ivm_rows;

-- case: a global COUNT(DISTINCT x) next to a MAX over the same argument (read back from its values)
-- model: SELECT count(DISTINCT r.b) AS d, max(r.b) AS m FROM db.r AS r
-- changed: db.r
SELECT c5 AS `d`, c6 AS `m`, _ivm_weight
FROM (
  SELECT c3 AS c5, c4 AS c6, _ivm_weight
  FROM (
    WITH _ivm_d AS (
      SELECT c1 AS c2, _ivm_weight
      FROM (
        SELECT `b` AS c1, _ivm_weight
        FROM <db.r@delta>
      ) AS t1
    ),
    _ivm_rp AS (
      SELECT CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_count
      FROM (
        SELECT * FROM _ivm_d
      ) AS _ivm_c
      HAVING count(*) > 0
    ),
    _ivm_ov0 AS (
      SELECT * FROM (SELECT `_ivm_value__c2` AS `_ivm_value`, `_ivm_weight` FROM <state agg0.states> WHERE _ivm_set = 1)
    ),
    _ivm_dv0 AS (
      SELECT `c2` AS _ivm_value, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
      FROM (
        SELECT * FROM _ivm_d
      ) AS _ivm_c
      WHERE `c2` IS NOT NULL
      GROUP BY `c2`
      HAVING sum(_ivm_weight) <> 0
    ),
    _ivm_dp0 AS (
      SELECT CAST(0 AS BIGINT) AS `c3_s`, CAST(coalesce(sum(_ivm_weight), 0) AS BIGINT) AS `c3_n`
      FROM (
        SELECT _ivm_value, CAST(CASE WHEN sum(_ivm_was) <= 0 AND sum(_ivm_now) > 0 THEN 1 WHEN sum(_ivm_was) > 0 AND sum(_ivm_now) <= 0 THEN -1 ELSE 0 END AS BIGINT) AS _ivm_weight
        FROM (
          SELECT _ivm_value, _ivm_weight AS _ivm_was, _ivm_weight AS _ivm_now FROM (
            SELECT * FROM _ivm_ov0
          ) AS _ivm_ov
          UNION ALL
          SELECT _ivm_value, CAST(0 AS BIGINT) AS _ivm_was, _ivm_weight AS _ivm_now FROM (
            SELECT * FROM _ivm_dv0
          ) AS _ivm_dv
        ) AS _ivm_u
        GROUP BY _ivm_value
      ) AS _ivm_x
    ),
    _ivm_sv0 AS (
      SELECT * FROM (
        SELECT _ivm_value, inline(array(named_struct('_ivm_weight', `_ivm_old_weight`, '_ivm_side', CAST(-1 AS BIGINT)), named_struct('_ivm_weight', _ivm_weight, '_ivm_side', CAST(1 AS BIGINT))))
        FROM (
          SELECT _ivm_value, CAST(sum(CASE WHEN _ivm_is_old THEN _ivm_weight END) AS BIGINT) AS `_ivm_old_weight`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
          FROM (
            SELECT _ivm_value, _ivm_weight, TRUE AS _ivm_is_old FROM _ivm_ov0
            UNION ALL
            SELECT _ivm_value, _ivm_weight, FALSE AS _ivm_is_old FROM _ivm_dv0
          ) AS _ivm_u
          GROUP BY _ivm_value
        ) AS _ivm_on
      ) AS _ivm_s
      WHERE _ivm_weight <> 0
    ),
    _ivm_p AS (
      SELECT p.*, coalesce(_ivm_x0.`c3_s`, 0) AS `c3_s`, coalesce(_ivm_x0.`c3_n`, 0) AS `c3_n`
      FROM (
        SELECT * FROM _ivm_rp
      ) AS p
      LEFT JOIN (
        SELECT * FROM _ivm_dp0
      ) AS _ivm_x0 ON TRUE
    ),
    _ivm_og AS (
      SELECT * FROM (SELECT `_ivm_count`, `c3_s`, `c3_n` FROM <state agg0.states> WHERE _ivm_set = 0)
    ),
    _ivm_gs AS (
      SELECT inline(array(named_struct('_ivm_count', `_ivm_old_count`, 'c3_s', `_ivm_old_c3_s`, 'c3_n', `_ivm_old_c3_n`, '_ivm_side', CAST(-1 AS BIGINT)), named_struct('_ivm_count', `_ivm_count`, 'c3_s', `c3_s`, 'c3_n', `c3_n`, '_ivm_side', CAST(1 AS BIGINT))))
      FROM (
        SELECT CAST(sum(CASE WHEN _ivm_is_old THEN `_ivm_count` END) AS BIGINT) AS `_ivm_old_count`, CASE WHEN count(CASE WHEN _ivm_is_old THEN 1 END) = count(CASE WHEN _ivm_is_old THEN `c3_s` END) THEN sum(CASE WHEN _ivm_is_old THEN `c3_s` END) END AS `_ivm_old_c3_s`, CAST(sum(CASE WHEN _ivm_is_old THEN `c3_n` END) AS BIGINT) AS `_ivm_old_c3_n`, CAST(sum(`_ivm_count`) AS BIGINT) AS `_ivm_count`, CASE WHEN count(*) = count(`c3_s`) THEN sum(`c3_s`) END AS `c3_s`, CAST(sum(`c3_n`) AS BIGINT) AS `c3_n`
        FROM (
          SELECT `_ivm_count`, `c3_s`, `c3_n`, TRUE AS _ivm_is_old FROM _ivm_og
          UNION ALL
          SELECT `_ivm_count`, `c3_s`, `c3_n`, FALSE AS _ivm_is_old FROM _ivm_p
        ) AS _ivm_u
      ) AS _ivm_on
    )
    SELECT `c3`, `c4`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
    FROM (
      SELECT `c3`, `c4`, CAST(1 AS BIGINT) * _ivm_side AS _ivm_weight
      FROM (
        SELECT coalesce(_ivm_g.`c3_n`, 0) AS `c3`, _ivm_v0._max AS `c4`, coalesce(_ivm_g._ivm_count, 0) AS _ivm_count, _ivm_g._ivm_side
        FROM (SELECT 1 AS _ivm_one) AS _ivm_one
        LEFT JOIN (
          SELECT * FROM _ivm_gs
        ) AS _ivm_g ON TRUE
        LEFT JOIN (
        SELECT _ivm_side, max(_ivm_value) AS _max
        FROM (
          SELECT * FROM _ivm_sv0
        ) AS _ivm_v
        GROUP BY _ivm_side
        ) AS _ivm_v0 ON TRUE AND _ivm_g._ivm_side = _ivm_v0._ivm_side
      ) AS _ivm_r
      WHERE CAST(1 AS BIGINT) > 0
    ) AS _ivm_x
    GROUP BY `c3`, `c4`
    HAVING sum(_ivm_weight) <> 0
  ) AS t2
) AS _ivm_out;
