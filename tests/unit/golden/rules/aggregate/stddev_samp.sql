-- Aggregate function: STDDEV_SAMP(x) (ivm_core/rules/aggregate/functions/stddev_samp.py)
--
--   VALUES: as VAR_POP; result sqrt(m2 / (n - 1)), NULL below two values
-- Cases: a model, the inputs that changed, the SQL of the model's change, and the state build
-- (see tests/unit/test_golden_rules.py; regenerate with UPDATE_GOLDEN=1 pytest tests/unit/test_golden_rules.py).

-- case: the sample standard deviation, a global aggregate
-- model: SELECT stddev_samp(r.b) AS sd FROM db.r AS r
-- changed: db.r
-- show: build, merge
SELECT c4 AS `sd`, _ivm_weight
FROM (
  SELECT c3 AS c4, _ivm_weight
  FROM (
    WITH _ivm_d AS (
      SELECT c1 AS c2, _ivm_weight
      FROM (
        SELECT `b` AS c1, _ivm_weight
        FROM <db.r@delta>
      ) AS t1
    ),
    _ivm_p AS (
      SELECT CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_count
      FROM (
        SELECT * FROM _ivm_d
      ) AS _ivm_c
      HAVING count(*) > 0
    ),
    _ivm_og AS (
      SELECT * FROM (SELECT `_ivm_count` FROM <state agg0.states> WHERE _ivm_set = 0)
    ),
    _ivm_gs AS (
      SELECT inline(array(named_struct('_ivm_count', `_ivm_old_count`, '_ivm_side', CAST(-1 AS BIGINT)), named_struct('_ivm_count', `_ivm_count`, '_ivm_side', CAST(1 AS BIGINT))))
      FROM (
        SELECT CAST(sum(CASE WHEN _ivm_is_old THEN `_ivm_count` END) AS BIGINT) AS `_ivm_old_count`, CAST(sum(`_ivm_count`) AS BIGINT) AS `_ivm_count`
        FROM (
          SELECT `_ivm_count`, TRUE AS _ivm_is_old FROM _ivm_og
          UNION ALL
          SELECT `_ivm_count`, FALSE AS _ivm_is_old FROM _ivm_p
        ) AS _ivm_u
      ) AS _ivm_on
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
    )
    SELECT `c3`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
    FROM (
      SELECT `c3`, CAST(1 AS BIGINT) * _ivm_side AS _ivm_weight
      FROM (
        SELECT CASE WHEN _ivm_v0._moments.n > 1 THEN sqrt(_ivm_v0._moments.m2 / (_ivm_v0._moments.n - 1)) END AS `c3`, coalesce(_ivm_g._ivm_count, 0) AS _ivm_count, _ivm_g._ivm_side
        FROM (SELECT 1 AS _ivm_one) AS _ivm_one
        LEFT JOIN (
          SELECT * FROM _ivm_gs
        ) AS _ivm_g ON TRUE
        LEFT JOIN (
        SELECT _ivm_side, aggregate(array_sort(collect_list(named_struct('v', CAST(_ivm_value AS DOUBLE), 'w', CAST(_ivm_weight AS DOUBLE)))), named_struct('n', CAST(0 AS DOUBLE), 'mean', CAST(0 AS DOUBLE), 'm2', CAST(0 AS DOUBLE)), (acc, e) -> named_struct('n', (acc.n + e.w), 'mean', (acc.mean + (e.v - acc.mean) * e.w / (acc.n + e.w)), 'm2', acc.m2 + (e.v - acc.mean) * e.w * (e.v - (acc.mean + (e.v - acc.mean) * e.w / (acc.n + e.w))))) AS _moments
        FROM (
          SELECT * FROM _ivm_sv0
        ) AS _ivm_v
        GROUP BY _ivm_side
        ) AS _ivm_v0 ON TRUE AND _ivm_g._ivm_side = _ivm_v0._ivm_side
      ) AS _ivm_r
      WHERE CAST(1 AS BIGINT) > 0
    ) AS _ivm_x
    GROUP BY `c3`
    HAVING sum(_ivm_weight) <> 0
  ) AS t2
) AS _ivm_out;
-- build of state agg0.states
WITH _ivm_child AS (
  SELECT c1 AS c2, _ivm_weight
  FROM (
    SELECT `b` AS c1, _ivm_weight
    FROM <db.r@old>
  ) AS t1
),
_ivm_values0 AS (
  SELECT `c2` AS _ivm_value, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
  FROM (
    SELECT * FROM _ivm_child
  ) AS _ivm_c
  WHERE `c2` IS NOT NULL
  GROUP BY `c2`
  HAVING sum(_ivm_weight) <> 0
)
SELECT 0 AS `_ivm_set`, `_ivm_count` AS `_ivm_count`, NULL AS `_ivm_value__c2`, NULL AS `_ivm_weight`
FROM (
  SELECT CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_count
  FROM (
    SELECT * FROM _ivm_child
  ) AS _ivm_c
  HAVING count(*) > 0
) AS _ivm_rows
UNION ALL
SELECT 1 AS `_ivm_set`, NULL AS `_ivm_count`, `_ivm_value` AS `_ivm_value__c2`, `_ivm_weight` AS `_ivm_weight`
FROM (
  SELECT * FROM _ivm_values0
) AS _ivm_rows;
-- update of state agg0.groups
MERGE INTO <state agg0.states> AS s
USING (
  SELECT CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_count
  FROM (
    SELECT c1 AS c2, _ivm_weight
    FROM (
      SELECT `b` AS c1, _ivm_weight
      FROM <db.r@delta>
    ) AS t1
  ) AS _ivm_c
  HAVING count(*) > 0
) AS d
ON s._ivm_set = 0
WHEN MATCHED AND s._ivm_count + d._ivm_count = 0 THEN DELETE
WHEN MATCHED THEN UPDATE SET s._ivm_count = CASE WHEN s._ivm_count + d._ivm_count < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a group would become negative)') AS BIGINT) ELSE s._ivm_count + d._ivm_count END
WHEN NOT MATCHED AND d._ivm_count <> 0 THEN INSERT (`_ivm_set`, `_ivm_count`, `_ivm_value__c2`, `_ivm_weight`) VALUES (0, CASE WHEN d._ivm_count < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a group would become negative)') AS BIGINT) ELSE d._ivm_count END, NULL, NULL);
-- update of state agg0.values__c2
MERGE INTO <state agg0.states> AS s
USING (
  SELECT `c2` AS _ivm_value, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
  FROM (
    SELECT c1 AS c2, _ivm_weight
    FROM (
      SELECT `b` AS c1, _ivm_weight
      FROM <db.r@delta>
    ) AS t1
  ) AS _ivm_c
  WHERE `c2` IS NOT NULL
  GROUP BY `c2`
  HAVING sum(_ivm_weight) <> 0
) AS d
ON s._ivm_set = 1 AND s.`_ivm_value__c2` <=> d.`_ivm_value`
WHEN MATCHED AND s._ivm_weight + d._ivm_weight = 0 THEN DELETE
WHEN MATCHED THEN UPDATE SET s._ivm_weight = CASE WHEN s._ivm_weight + d._ivm_weight < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a value would become negative)') AS BIGINT) ELSE s._ivm_weight + d._ivm_weight END
WHEN NOT MATCHED THEN INSERT (`_ivm_set`, `_ivm_count`, `_ivm_value__c2`, `_ivm_weight`) VALUES (1, NULL, d.`_ivm_value`, CASE WHEN d._ivm_weight < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a value would become negative)') AS BIGINT) ELSE d._ivm_weight END);
