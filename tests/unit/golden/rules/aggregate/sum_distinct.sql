-- Aggregate function: SUM(DISTINCT x) (ivm_core/rules/aggregate/functions/sum_distinct.py)
--
--   VALUES: result the sum of the stored values (NULL when none)
-- Cases: a model, the inputs that changed, the SQL of the model's change, and the state build
-- (see tests/unit/test_golden_rules.py; regenerate with UPDATE_GOLDEN=1 pytest tests/unit/test_golden_rules.py).

-- case: SUM(DISTINCT x) adds each stored value once
-- model: SELECT r.a, sum(DISTINCT r.b) AS sd FROM db.r AS r GROUP BY r.a
-- changed: db.r
SELECT c6 AS `a`, c7 AS `sd`, _ivm_weight
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
      SELECT s.* FROM <state agg0.groups> AS s LEFT SEMI JOIN _ivm_t AS t ON s.`c2` <=> t.`c2`
    ),
    _ivm_ng AS (
      SELECT `c2`, CAST(sum(_ivm_count) AS BIGINT) AS _ivm_count
      FROM (
        SELECT `c2`, `_ivm_count` FROM _ivm_og
        UNION ALL
        SELECT `c2`, `_ivm_count` FROM _ivm_p
      ) AS _ivm_u GROUP BY `c2`
    ),
    _ivm_ov0 AS (
      SELECT s.* FROM <state agg0.values__c4> AS s LEFT SEMI JOIN _ivm_t AS t ON s.`c2` <=> t.`c2`
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
    _ivm_nv0 AS (
      SELECT `c2`, _ivm_value, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
      FROM (
        SELECT `c2`, _ivm_value, _ivm_weight FROM _ivm_ov0
        UNION ALL
        SELECT `c2`, _ivm_value, _ivm_weight FROM _ivm_dv0
      ) AS _ivm_u
      GROUP BY `c2`, _ivm_value
      HAVING sum(_ivm_weight) <> 0
    )
    SELECT `c3`, `c5`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
    FROM (
      SELECT `c3`, `c5`, -_ivm_weight AS _ivm_weight FROM (
        SELECT `c3`, `c5`, CAST(1 AS BIGINT) AS _ivm_weight
        FROM (
          SELECT _ivm_g.`c2` AS `c3`, _ivm_v0._sum AS `c5`, coalesce(_ivm_g._ivm_count, 0) AS _ivm_count
          FROM (
            SELECT * FROM _ivm_og
          ) AS _ivm_g
          LEFT JOIN (
          SELECT `c2`, sum(_ivm_value) AS _sum
          FROM (
            SELECT * FROM _ivm_ov0
          ) AS _ivm_v
          GROUP BY `c2`
          ) AS _ivm_v0 ON _ivm_g.`c2` <=> _ivm_v0.`c2`
          WHERE _ivm_g._ivm_count > 0
        ) AS _ivm_r
        WHERE CAST(1 AS BIGINT) > 0
      ) AS _ivm_old
      UNION ALL
      SELECT `c3`, `c5`, _ivm_weight FROM (
        SELECT `c3`, `c5`, CAST(1 AS BIGINT) AS _ivm_weight
        FROM (
          SELECT _ivm_g.`c2` AS `c3`, _ivm_v0._sum AS `c5`, coalesce(_ivm_g._ivm_count, 0) AS _ivm_count
          FROM (
            SELECT * FROM _ivm_ng
          ) AS _ivm_g
          LEFT JOIN (
          SELECT `c2`, sum(_ivm_value) AS _sum
          FROM (
            SELECT * FROM _ivm_nv0
          ) AS _ivm_v
          GROUP BY `c2`
          ) AS _ivm_v0 ON _ivm_g.`c2` <=> _ivm_v0.`c2`
          WHERE _ivm_g._ivm_count > 0
        ) AS _ivm_r
        WHERE CAST(1 AS BIGINT) > 0
      ) AS _ivm_new
    ) AS _ivm_x
    GROUP BY `c3`, `c5`
    HAVING sum(_ivm_weight) <> 0
  ) AS t2
) AS _ivm_out;
