-- Aggregate function: COUNT(*) (ivm_core/rules/aggregate/functions/count_star.py)
--
--   the group's row count _ivm_count: no state of its own
-- Cases: a model, the inputs that changed, the SQL of the model's change, and the state build
-- (see tests/unit/test_golden_rules.py; regenerate with UPDATE_GOLDEN=1 pytest tests/unit/test_golden_rules.py).

-- case: COUNT(*) reads the row count
-- model: SELECT r.a, count(*) AS n FROM db.r AS r GROUP BY r.a
-- changed: db.r
-- show: build
SELECT c5 AS `a`, c6 AS `n`, _ivm_weight
FROM (
  SELECT c3 AS c5, c4 AS c6, _ivm_weight
  FROM (
    WITH _ivm_d AS (
      SELECT c0 AS c2, _ivm_weight
      FROM (
        SELECT `a` AS c0, _ivm_weight
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
      SELECT s.* FROM (SELECT t.`a` AS `c2`, CAST(t.`n` AS BIGINT) AS `_ivm_count` FROM <state agg0.target> AS t) AS s LEFT SEMI JOIN _ivm_t AS t ON s.`c2` <=> t.`c2`
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
    )
    SELECT `c3`, `c4`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
    FROM (
      SELECT `c3`, `c4`, CAST(1 AS BIGINT) * _ivm_side AS _ivm_weight
      FROM (
        SELECT _ivm_g.`c2` AS `c3`, coalesce(_ivm_g._ivm_count, 0) AS `c4`, coalesce(_ivm_g._ivm_count, 0) AS _ivm_count, _ivm_g._ivm_side
        FROM (
          SELECT * FROM _ivm_gs
        ) AS _ivm_g
        WHERE CASE WHEN _ivm_g._ivm_count < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a group would become negative)') AS BIGINT) ELSE _ivm_g._ivm_count END > 0
      ) AS _ivm_r
      WHERE CAST(1 AS BIGINT) > 0
    ) AS _ivm_x
    GROUP BY `c3`, `c4`
    HAVING sum(_ivm_weight) <> 0
  ) AS t2
) AS _ivm_out;
