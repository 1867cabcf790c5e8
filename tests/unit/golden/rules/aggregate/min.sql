-- Aggregate function: MIN(x) (ivm_core/rules/aggregate/functions/min.py)
--
--   VALUES: the group's values with their weights; result min(value)
-- Cases: a model, the inputs that changed, the SQL of the model's change, and the state build
-- (see tests/unit/test_golden_rules.py; regenerate with UPDATE_GOLDEN=1 pytest tests/unit/test_golden_rules.py).

-- case: MIN reads the smallest stored value of the touched groups
-- model: SELECT r.a, min(r.b) AS lo FROM db.r AS r GROUP BY r.a
-- changed: db.r
-- show: build, merge
SELECT c6 AS `a`, c7 AS `lo`, _ivm_weight
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
      SELECT `c2`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_count
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
      SELECT s.* FROM (SELECT `c2`, `_ivm_count` FROM <state agg0.states> WHERE _ivm_set = 0) AS s LEFT SEMI JOIN _ivm_t AS t ON s.`c2` <=> t.`c2`
    ),
    _ivm_gs AS (
      SELECT `c2`, inline(array(named_struct('_ivm_count', `_ivm_old_count`, '_ivm_side', CAST(-1 AS BIGINT)), named_struct('_ivm_count', `_ivm_count`, '_ivm_side', CAST(1 AS BIGINT))))
      FROM (
        SELECT `c2`, CAST(sum(CASE WHEN _ivm_is_old THEN `_ivm_count` END) AS BIGINT) AS `_ivm_old_count`, CAST(sum(`_ivm_count`) AS BIGINT) AS `_ivm_count`
        FROM (
          SELECT `c2`, `_ivm_count`, TRUE AS _ivm_is_old FROM _ivm_og
          UNION ALL
          SELECT `c2`, `_ivm_count`, FALSE AS _ivm_is_old FROM _ivm_p
        ) AS _ivm_u
        GROUP BY `c2`
      ) AS _ivm_on
    ),
    _ivm_ov0 AS (
      SELECT s.* FROM (SELECT `c2`, `_ivm_value__c4` AS `_ivm_value`, `_ivm_weight` FROM <state agg0.states> WHERE _ivm_set = 1) AS s LEFT SEMI JOIN _ivm_t AS t ON s.`c2` <=> t.`c2`
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
    _ivm_sv0 AS (
      SELECT * FROM (
        SELECT `c2`, _ivm_value, inline(array(named_struct('_ivm_weight', `_ivm_old_weight`, '_ivm_side', CAST(-1 AS BIGINT)), named_struct('_ivm_weight', _ivm_weight, '_ivm_side', CAST(1 AS BIGINT))))
        FROM (
          SELECT `c2`, _ivm_value, CAST(sum(CASE WHEN _ivm_is_old THEN _ivm_weight END) AS BIGINT) AS `_ivm_old_weight`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
          FROM (
            SELECT `c2`, _ivm_value, _ivm_weight, TRUE AS _ivm_is_old FROM _ivm_ov0
            UNION ALL
            SELECT `c2`, _ivm_value, _ivm_weight, FALSE AS _ivm_is_old FROM _ivm_dv0
          ) AS _ivm_u
          GROUP BY `c2`, _ivm_value
        ) AS _ivm_on
      ) AS _ivm_s
      WHERE _ivm_weight <> 0
    )
    SELECT `c3`, `c5`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
    FROM (
      SELECT `c3`, `c5`, CAST(1 AS BIGINT) * _ivm_side AS _ivm_weight
      FROM (
        SELECT _ivm_g.`c2` AS `c3`, _ivm_v0._min AS `c5`, coalesce(_ivm_g._ivm_count, 0) AS _ivm_count, _ivm_g._ivm_side
        FROM (
          SELECT * FROM _ivm_gs
        ) AS _ivm_g
        LEFT JOIN (
        SELECT `c2`, _ivm_side, min(_ivm_value) AS _min
        FROM (
          SELECT * FROM _ivm_sv0
        ) AS _ivm_v
        GROUP BY `c2`, _ivm_side
        ) AS _ivm_v0 ON _ivm_g.`c2` <=> _ivm_v0.`c2` AND _ivm_g._ivm_side = _ivm_v0._ivm_side
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
SELECT `c2` AS `c2`, 0 AS `_ivm_set`, `_ivm_count` AS `_ivm_count`, NULL AS `_ivm_value__c4`, NULL AS `_ivm_weight`
FROM (
  SELECT `c2`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_count
  FROM (
    SELECT * FROM _ivm_child
  ) AS _ivm_c
  GROUP BY `c2`
  HAVING count(*) > 0
) AS _ivm_rows
UNION ALL
SELECT `c2` AS `c2`, 1 AS `_ivm_set`, NULL AS `_ivm_count`, `_ivm_value` AS `_ivm_value__c4`, `_ivm_weight` AS `_ivm_weight`
FROM (
  SELECT * FROM _ivm_values0
) AS _ivm_rows;
-- update of state agg0.groups
MERGE INTO <state agg0.states> AS s
USING (
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
) AS d
ON s._ivm_set = 0 AND s.`c2` <=> d.`c2`
WHEN MATCHED AND s._ivm_count + d._ivm_count = 0 THEN DELETE
WHEN MATCHED THEN UPDATE SET s._ivm_count = CASE WHEN s._ivm_count + d._ivm_count < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a group would become negative)') AS BIGINT) ELSE s._ivm_count + d._ivm_count END
WHEN NOT MATCHED AND d._ivm_count <> 0 THEN INSERT (`c2`, `_ivm_set`, `_ivm_count`, `_ivm_value__c4`, `_ivm_weight`) VALUES (d.`c2`, 0, CASE WHEN d._ivm_count < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a group would become negative)') AS BIGINT) ELSE d._ivm_count END, NULL, NULL);
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
WHEN NOT MATCHED THEN INSERT (`c2`, `_ivm_set`, `_ivm_count`, `_ivm_value__c4`, `_ivm_weight`) VALUES (d.`c2`, 1, NULL, d.`_ivm_value`, CASE WHEN d._ivm_weight < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a value would become negative)') AS BIGINT) ELSE d._ivm_weight END);
