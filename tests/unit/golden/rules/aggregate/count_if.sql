-- Aggregate function: COUNT_IF(p) (ivm_core/rules/aggregate/functions/count_if.py)
--
--   LINEAR: _s = Σ w over the rows where p is true; result _s
-- Cases: a model, the inputs that changed, the SQL of the model's change, and the state build
-- (see tests/unit/test_golden_rules.py; regenerate with UPDATE_GOLDEN=1 pytest tests/unit/test_golden_rules.py).

-- case: the weighted count of true rows, 0 over none
-- model: SELECT r.a, count_if(r.b > 1) AS n FROM db.r AS r GROUP BY r.a
-- changed: db.r
-- show: build, merge
SELECT c6 AS `a`, c7 AS `n`, _ivm_weight
FROM (
  SELECT c3 AS c6, c5 AS c7, _ivm_weight
  FROM (
    WITH _ivm_d AS (
      SELECT c0 AS c2, c1 > 1 AS c4, _ivm_weight
      FROM (
        SELECT `a` AS c0, `b` AS c1, _ivm_weight
        FROM <db.r@delta>
      ) AS t1
    ),
    _ivm_p AS (
      SELECT `c2`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_count, CAST(coalesce(sum(CASE WHEN `c4` THEN _ivm_weight ELSE 0 END), 0) AS BIGINT) AS `c5_s`, CAST(coalesce(sum(CASE WHEN `c4` IS NOT NULL THEN _ivm_weight END), 0) AS BIGINT) AS `c5_n`
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
        SELECT _ivm_g.`c2` AS `c3`, CAST(coalesce(_ivm_g.`c5_s`, 0) AS BIGINT) AS `c5`, coalesce(_ivm_g._ivm_count, 0) AS _ivm_count, _ivm_g._ivm_side
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
SELECT `c2`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_count, CAST(coalesce(sum(CASE WHEN `c4` THEN _ivm_weight ELSE 0 END), 0) AS BIGINT) AS `c5_s`, CAST(coalesce(sum(CASE WHEN `c4` IS NOT NULL THEN _ivm_weight END), 0) AS BIGINT) AS `c5_n`
FROM (
  SELECT c0 AS c2, c1 > 1 AS c4, _ivm_weight
  FROM (
    SELECT `a` AS c0, `b` AS c1, _ivm_weight
    FROM <db.r@old>
  ) AS t1
) AS _ivm_c
GROUP BY `c2`
HAVING count(*) > 0;
-- update of state agg0.groups
MERGE INTO <state agg0.groups> AS s
USING (
  SELECT `c2`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_count, CAST(coalesce(sum(CASE WHEN `c4` THEN _ivm_weight ELSE 0 END), 0) AS BIGINT) AS `c5_s`, CAST(coalesce(sum(CASE WHEN `c4` IS NOT NULL THEN _ivm_weight END), 0) AS BIGINT) AS `c5_n`
  FROM (
    SELECT c0 AS c2, c1 > 1 AS c4, _ivm_weight
    FROM (
      SELECT `a` AS c0, `b` AS c1, _ivm_weight
      FROM <db.r@delta>
    ) AS t1
  ) AS _ivm_c
  GROUP BY `c2`
  HAVING count(*) > 0
) AS d
ON s.`c2` <=> d.`c2`
WHEN MATCHED AND s._ivm_count + d._ivm_count = 0 THEN DELETE
WHEN MATCHED THEN UPDATE SET s._ivm_count = CASE WHEN s._ivm_count + d._ivm_count < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a group would become negative)') AS BIGINT) ELSE s._ivm_count + d._ivm_count END, s.`c5_s` = s.`c5_s` + d.`c5_s`, s.`c5_n` = s.`c5_n` + d.`c5_n`
WHEN NOT MATCHED AND d._ivm_count <> 0 THEN INSERT (`c2`, `_ivm_count`, `c5_s`, `c5_n`) VALUES (d.`c2`, CASE WHEN d._ivm_count < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a group would become negative)') AS BIGINT) ELSE d._ivm_count END, d.`c5_s`, d.`c5_n`);
