-- MAX_BY(x, y) (ivm_core/rules/aggregate/functions/max_by.py): the group's (y, x IS NULL, x) pairs
-- with their weights; the result is the x of the largest pair.

-- case: global, beside MIN_BY over the same columns (one value state: both read the same pairs)
-- model: SELECT max_by(r.a, r.b) AS m, min_by(r.a, r.b) AS lo FROM db.r AS r
-- changed: db.r
SELECT c5 AS `m`, c6 AS `lo`, _ivm_weight
FROM (
  SELECT c3 AS c5, c4 AS c6, _ivm_weight
  FROM (
    WITH _ivm_d AS (
      SELECT CASE WHEN NOT c1 IS NULL THEN STRUCT(c1 AS o, c0 IS NULL AS n, c0 AS v) END AS c2, _ivm_weight
      FROM (
        SELECT `a` AS c0, `b` AS c1, _ivm_weight
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
    SELECT `c3`, `c4`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
    FROM (
      SELECT `c3`, `c4`, CAST(1 AS BIGINT) * _ivm_side AS _ivm_weight
      FROM (
        SELECT _ivm_v0._max_by.v AS `c3`, _ivm_v0._min_by.v AS `c4`, coalesce(_ivm_g._ivm_count, 0) AS _ivm_count, _ivm_g._ivm_side
        FROM (SELECT 1 AS _ivm_one) AS _ivm_one
        LEFT JOIN (
          SELECT * FROM _ivm_gs
        ) AS _ivm_g ON TRUE
        LEFT JOIN (
        SELECT _ivm_side, max(_ivm_value) AS _max_by, min(_ivm_value) AS _min_by
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
