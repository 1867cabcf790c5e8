-- Rule: aggregate (ivm_core/rules/aggregate/)
--
--   Δγ(R) = Σ_{g touched by ΔR} row(S_g + ΔS_g) − row(S_g), from the group state and the value states
-- (each function's share: golden/rules/aggregate/<function>.sql)
-- Cases: a model, the inputs that changed, the SQL of the model's change (see
-- tests/unit/test_golden_rules.py; regenerate with UPDATE_GOLDEN=1 pytest tests/unit/test_golden_rules.py).

-- case: GROUP BY with COUNT(*): the group state and its maintenance (the key not in the result: the target cannot hold the state)
-- model: SELECT count(*) AS n FROM db.r AS r GROUP BY r.a
-- changed: db.r
-- show: build, merge, rewrite
SELECT c5 AS `n`, _ivm_weight
FROM (
  SELECT c4 AS c5, _ivm_weight
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
      SELECT s.* FROM <state agg0.groups> AS s LEFT SEMI JOIN _ivm_t AS t ON s.`c2` <=> t.`c2`
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
        WHERE _ivm_g._ivm_count > 0
      ) AS _ivm_r
      WHERE CAST(1 AS BIGINT) > 0
    ) AS _ivm_x
    GROUP BY `c3`, `c4`
    HAVING sum(_ivm_weight) <> 0
  ) AS t2
) AS _ivm_out;
-- build of state agg0.groups
SELECT `c2`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_count
FROM (
  SELECT c0 AS c2, _ivm_weight
  FROM (
    SELECT `a` AS c0, _ivm_weight
    FROM <db.r@old>
  ) AS t1
) AS _ivm_c
GROUP BY `c2`
HAVING count(*) > 0;
-- update of state agg0.groups
MERGE INTO <state agg0.groups> AS s
USING (
  SELECT `c2`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_count
  FROM (
    SELECT c0 AS c2, _ivm_weight
    FROM (
      SELECT `a` AS c0, _ivm_weight
      FROM <db.r@delta>
    ) AS t1
  ) AS _ivm_c
  GROUP BY `c2`
  HAVING count(*) > 0
) AS d
ON s.`c2` <=> d.`c2`
WHEN MATCHED AND s._ivm_count + d._ivm_count = 0 THEN DELETE
WHEN MATCHED THEN UPDATE SET s._ivm_count = CASE WHEN s._ivm_count + d._ivm_count < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a group would become negative)') AS BIGINT) ELSE s._ivm_count + d._ivm_count END
WHEN NOT MATCHED AND d._ivm_count <> 0 THEN INSERT (`c2`, `_ivm_count`) VALUES (d.`c2`, CASE WHEN d._ivm_count < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a group would become negative)') AS BIGINT) ELSE d._ivm_count END);
-- rewrite of small state agg0.groups
INSERT OVERWRITE <state agg0.groups> (`c2`, `_ivm_count`)
SELECT `c2`, CASE WHEN CAST(sum(`_ivm_count`) AS BIGINT) < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a group would become negative)') AS BIGINT) ELSE CAST(sum(`_ivm_count`) AS BIGINT) END AS `_ivm_count`
FROM (
  SELECT `c2`, `_ivm_count` FROM <state agg0.groups>
  UNION ALL
  SELECT `c2`, `_ivm_count` FROM (
    SELECT `c2`, CAST(_ivm_weight AS BIGINT) AS _ivm_count
    FROM (
      SELECT c0 AS c2, _ivm_weight
      FROM (
        SELECT `a` AS c0, _ivm_weight
        FROM <db.r@delta>
      ) AS t1
    ) AS _ivm_c
  ) AS d
) AS _ivm_u
GROUP BY `c2`
HAVING sum(_ivm_count) <> 0;

-- case: the model's result is the aggregate: the target holds the group state (rules/aggregate/held.py), no exceptions without a SUM
-- model: SELECT r.a, count(*) AS n FROM db.r AS r GROUP BY r.a
-- changed: db.r
-- show: build, merge
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

-- case: the target holds the group state; a group with a NULL SUM argument, or a NULL sum, is in the exceptions
-- model: SELECT m.k, sum(m.p) AS total, count(*) AS n FROM db.m AS m GROUP BY m.k
-- changed: db.m
-- types: decimal
-- show: build, merge, rewritten
SELECT c8 AS `k`, c9 AS `total`, c10 AS `n`, _ivm_weight
FROM (
  SELECT c4 AS c8, c6 AS c9, c7 AS c10, _ivm_weight
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
      SELECT s.* FROM (SELECT t.`k` AS `c3`, CAST(t.`n` AS BIGINT) AS `_ivm_count`, t.`total` AS `c6_s`, CAST(t.`n` AS BIGINT) AS `c6_n` FROM <state agg0.target> AS t) AS s LEFT SEMI JOIN _ivm_t AS t ON s.`c3` <=> t.`c3`
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
    SELECT `c4`, `c6`, `c7`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
    FROM (
      SELECT `c4`, `c6`, `c7`, CAST(1 AS BIGINT) * _ivm_side AS _ivm_weight
      FROM (
        SELECT _ivm_g.`c3` AS `c4`, CASE WHEN coalesce(_ivm_g.`c6_n`, 0) > 0 THEN CAST(_ivm_g.`c6_s` AS decimal(22,2)) END AS `c6`, coalesce(_ivm_g._ivm_count, 0) AS `c7`, coalesce(_ivm_g._ivm_count, 0) AS _ivm_count, _ivm_g._ivm_side
        FROM (
          SELECT * FROM (
            SELECT * FROM _ivm_gs
          ) AS r
          WHERE CASE WHEN r.`_ivm_count` <> 0 AND (r.`c6_n` <> r.`_ivm_count` OR CAST(r.`c6_s` AS decimal(22,2)) IS NULL) THEN CAST(raise_error('the target row of a group would not determine its state (a SUM with a NULL value, or one that overflowed)') AS BOOLEAN) ELSE TRUE END
        ) AS _ivm_g
        WHERE CASE WHEN _ivm_g._ivm_count < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a group would become negative)') AS BIGINT) ELSE _ivm_g._ivm_count END > 0
      ) AS _ivm_r
      WHERE CAST(1 AS BIGINT) > 0
    ) AS _ivm_x
    GROUP BY `c4`, `c6`, `c7`
    HAVING sum(_ivm_weight) <> 0
  ) AS t2
) AS _ivm_out;
-- the new result a small target that holds the group state is rewritten with
SELECT c8 AS `k`, c9 AS `total`, c10 AS `n`, _ivm_weight
FROM (
  SELECT c4 AS c8, c6 AS c9, c7 AS c10, _ivm_weight
  FROM (
    SELECT `c4`, `c6`, `c7`, CAST(1 AS BIGINT) AS _ivm_weight
    FROM (
      SELECT _ivm_g.`c3` AS `c4`, CASE WHEN coalesce(_ivm_g.`c6_n`, 0) > 0 THEN CAST(_ivm_g.`c6_s` AS decimal(22,2)) END AS `c6`, coalesce(_ivm_g._ivm_count, 0) AS `c7`, coalesce(_ivm_g._ivm_count, 0) AS _ivm_count
      FROM (
        SELECT * FROM (
        SELECT * FROM (
          SELECT `c3`, CASE WHEN CAST(sum(`_ivm_count`) AS BIGINT) < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a group would become negative)') AS BIGINT) ELSE CAST(sum(`_ivm_count`) AS BIGINT) END AS `_ivm_count`, CASE WHEN count(*) = count(`c6_s`) THEN sum(`c6_s`) END AS `c6_s`, CAST(sum(`c6_n`) AS BIGINT) AS `c6_n`
          FROM (
            SELECT `c3`, `_ivm_count`, `c6_s`, `c6_n` FROM (SELECT t.`k` AS `c3`, CAST(t.`n` AS BIGINT) AS `_ivm_count`, t.`total` AS `c6_s`, CAST(t.`n` AS BIGINT) AS `c6_n` FROM <state agg0.target> AS t)
            UNION ALL
            SELECT `c3`, `_ivm_count`, `c6_s`, `c6_n` FROM (
              SELECT `c3`, CAST(_ivm_weight AS BIGINT) AS _ivm_count, coalesce(CASE WHEN _ivm_weight = 1 THEN CAST(`c5` AS decimal(33,2)) WHEN _ivm_weight = -1 THEN -CAST(`c5` AS decimal(33,2)) ELSE `c5` * _ivm_weight END, 0) AS `c6_s`, coalesce(CASE WHEN `c5` IS NOT NULL THEN _ivm_weight END, 0) AS `c6_n`
              FROM (
                SELECT c0 AS c3, c2 AS c5, _ivm_weight
                FROM (
                  SELECT `k` AS c0, `p` AS c2, _ivm_weight
                  FROM <db.m@delta>
                ) AS t1
              ) AS _ivm_c
            ) AS d
          ) AS _ivm_u
          GROUP BY `c3`
          HAVING sum(_ivm_count) <> 0
        ) AS r
        WHERE CASE WHEN r.`_ivm_count` <> 0 AND (r.`c6_n` <> r.`_ivm_count` OR CAST(r.`c6_s` AS decimal(22,2)) IS NULL) THEN CAST(raise_error('the target row of a group would not determine its state (a SUM with a NULL value, or one that overflowed)') AS BOOLEAN) ELSE TRUE END
        )
      ) AS _ivm_g
      WHERE _ivm_g._ivm_count > 0
    ) AS _ivm_r
    WHERE CAST(1 AS BIGINT) > 0
  ) AS t1
) AS _ivm_out;

-- case: a global aggregate always has its one row
-- model: SELECT count(*) AS n, sum(r.b) AS s FROM db.r AS r
-- changed: db.r
-- show: build, merge, rewrite
SELECT c5 AS `n`, c6 AS `s`, _ivm_weight
FROM (
  SELECT c2 AS c5, c4 AS c6, _ivm_weight
  FROM (
    WITH _ivm_d AS (
      SELECT c1 AS c3, _ivm_weight
      FROM (
        SELECT `b` AS c1, _ivm_weight
        FROM <db.r@delta>
      ) AS t1
    ),
    _ivm_p AS (
      SELECT CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_count, coalesce(sum(`c3` * _ivm_weight), 0) AS `c4_s`, CAST(coalesce(sum(CASE WHEN `c3` IS NOT NULL THEN _ivm_weight END), 0) AS BIGINT) AS `c4_n`
      FROM (
        SELECT * FROM _ivm_d
      ) AS _ivm_c
      HAVING count(*) > 0
    ),
    _ivm_og AS (
      SELECT * FROM <state agg0.groups>
    ),
    _ivm_gs AS (
      SELECT inline(array(named_struct('_ivm_count', `_ivm_old_count`, 'c4_s', `_ivm_old_c4_s`, 'c4_n', `_ivm_old_c4_n`, '_ivm_side', CAST(-1 AS BIGINT)), named_struct('_ivm_count', `_ivm_count`, 'c4_s', `c4_s`, 'c4_n', `c4_n`, '_ivm_side', CAST(1 AS BIGINT))))
      FROM (
        SELECT CAST(sum(CASE WHEN _ivm_is_old THEN `_ivm_count` END) AS BIGINT) AS `_ivm_old_count`, CASE WHEN count(CASE WHEN _ivm_is_old THEN 1 END) = count(CASE WHEN _ivm_is_old THEN `c4_s` END) THEN sum(CASE WHEN _ivm_is_old THEN `c4_s` END) END AS `_ivm_old_c4_s`, CAST(sum(CASE WHEN _ivm_is_old THEN `c4_n` END) AS BIGINT) AS `_ivm_old_c4_n`, CAST(sum(`_ivm_count`) AS BIGINT) AS `_ivm_count`, CASE WHEN count(*) = count(`c4_s`) THEN sum(`c4_s`) END AS `c4_s`, CAST(sum(`c4_n`) AS BIGINT) AS `c4_n`
        FROM (
          SELECT `_ivm_count`, `c4_s`, `c4_n`, TRUE AS _ivm_is_old FROM _ivm_og
          UNION ALL
          SELECT `_ivm_count`, `c4_s`, `c4_n`, FALSE AS _ivm_is_old FROM _ivm_p
        ) AS _ivm_u
      ) AS _ivm_on
    )
    SELECT `c2`, `c4`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
    FROM (
      SELECT `c2`, `c4`, CAST(1 AS BIGINT) * _ivm_side AS _ivm_weight
      FROM (
        SELECT coalesce(_ivm_g._ivm_count, 0) AS `c2`, CASE WHEN coalesce(_ivm_g.`c4_n`, 0) > 0 THEN CAST(_ivm_g.`c4_s` AS bigint) END AS `c4`, coalesce(_ivm_g._ivm_count, 0) AS _ivm_count, _ivm_g._ivm_side
        FROM (SELECT 1 AS _ivm_one) AS _ivm_one
        LEFT JOIN (
          SELECT * FROM _ivm_gs
        ) AS _ivm_g ON TRUE
      ) AS _ivm_r
      WHERE CAST(1 AS BIGINT) > 0
    ) AS _ivm_x
    GROUP BY `c2`, `c4`
    HAVING sum(_ivm_weight) <> 0
  ) AS t2
) AS _ivm_out;
-- build of state agg0.groups
SELECT CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_count, coalesce(sum(`c3` * _ivm_weight), 0) AS `c4_s`, CAST(coalesce(sum(CASE WHEN `c3` IS NOT NULL THEN _ivm_weight END), 0) AS BIGINT) AS `c4_n`
FROM (
  SELECT c1 AS c3, _ivm_weight
  FROM (
    SELECT `b` AS c1, _ivm_weight
    FROM <db.r@old>
  ) AS t1
) AS _ivm_c
HAVING count(*) > 0;
-- update of state agg0.groups
MERGE INTO <state agg0.groups> AS s
USING (
  SELECT CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_count, coalesce(sum(`c3` * _ivm_weight), 0) AS `c4_s`, CAST(coalesce(sum(CASE WHEN `c3` IS NOT NULL THEN _ivm_weight END), 0) AS BIGINT) AS `c4_n`
  FROM (
    SELECT c1 AS c3, _ivm_weight
    FROM (
      SELECT `b` AS c1, _ivm_weight
      FROM <db.r@delta>
    ) AS t1
  ) AS _ivm_c
  HAVING count(*) > 0
) AS d
ON TRUE
WHEN MATCHED AND s._ivm_count + d._ivm_count = 0 THEN DELETE
WHEN MATCHED THEN UPDATE SET s._ivm_count = CASE WHEN s._ivm_count + d._ivm_count < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a group would become negative)') AS BIGINT) ELSE s._ivm_count + d._ivm_count END, s.`c4_s` = s.`c4_s` + d.`c4_s`, s.`c4_n` = s.`c4_n` + d.`c4_n`
WHEN NOT MATCHED AND d._ivm_count <> 0 THEN INSERT (`_ivm_count`, `c4_s`, `c4_n`) VALUES (CASE WHEN d._ivm_count < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a group would become negative)') AS BIGINT) ELSE d._ivm_count END, d.`c4_s`, d.`c4_n`);
-- rewrite of small state agg0.groups
INSERT OVERWRITE <state agg0.groups> (`_ivm_count`, `c4_s`, `c4_n`)
SELECT CASE WHEN CAST(sum(`_ivm_count`) AS BIGINT) < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a group would become negative)') AS BIGINT) ELSE CAST(sum(`_ivm_count`) AS BIGINT) END AS `_ivm_count`, CASE WHEN count(*) = count(`c4_s`) THEN sum(`c4_s`) END AS `c4_s`, CAST(sum(`c4_n`) AS BIGINT) AS `c4_n`
FROM (
  SELECT `_ivm_count`, `c4_s`, `c4_n` FROM <state agg0.groups>
  UNION ALL
  SELECT `_ivm_count`, `c4_s`, `c4_n` FROM (
    SELECT CAST(_ivm_weight AS BIGINT) AS _ivm_count, coalesce(`c3` * _ivm_weight, 0) AS `c4_s`, coalesce(CASE WHEN `c3` IS NOT NULL THEN _ivm_weight END, 0) AS `c4_n`
    FROM (
      SELECT c1 AS c3, _ivm_weight
      FROM (
        SELECT `b` AS c1, _ivm_weight
        FROM <db.r@delta>
      ) AS t1
    ) AS _ivm_c
  ) AS d
) AS _ivm_u
HAVING sum(_ivm_count) <> 0;

-- case: HAVING filters the aggregate's rows
-- model: SELECT r.a, count(*) AS n FROM db.r AS r GROUP BY r.a HAVING count(*) > 1
-- changed: db.r
SELECT c5 AS `a`, c6 AS `n`, _ivm_weight
FROM (
  SELECT c3 AS c5, c4 AS c6, _ivm_weight
  FROM (
    SELECT *
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
        SELECT s.* FROM <state agg0.groups> AS s LEFT SEMI JOIN _ivm_t AS t ON s.`c2` <=> t.`c2`
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
          WHERE _ivm_g._ivm_count > 0
        ) AS _ivm_r
        WHERE CAST(1 AS BIGINT) > 0
      ) AS _ivm_x
      GROUP BY `c3`, `c4`
      HAVING sum(_ivm_weight) <> 0
    ) AS t2
    WHERE (c4 > 1)
  ) AS t3
) AS _ivm_out;

-- case: DISTINCT is an aggregate without calls
-- model: SELECT DISTINCT r.b FROM db.r AS r
-- changed: db.r
SELECT c3 AS `b`, _ivm_weight
FROM (
  WITH _ivm_d AS (
    SELECT c1 AS c2, _ivm_weight
    FROM (
      SELECT `b` AS c1, _ivm_weight
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
  SELECT `c3`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
  FROM (
    SELECT `c3`, CAST(1 AS BIGINT) * _ivm_side AS _ivm_weight
    FROM (
      SELECT _ivm_g.`c2` AS `c3`, coalesce(_ivm_g._ivm_count, 0) AS _ivm_count, _ivm_g._ivm_side
      FROM (
        SELECT * FROM _ivm_gs
      ) AS _ivm_g
      WHERE _ivm_g._ivm_count > 0
    ) AS _ivm_r
    WHERE CAST(1 AS BIGINT) > 0
  ) AS _ivm_x
  GROUP BY `c3`
  HAVING sum(_ivm_weight) <> 0
) AS _ivm_out;

-- case: UNION is UNION ALL then DISTINCT
-- model: SELECT r.a FROM db.r AS r UNION SELECT s.c FROM db.s AS s
-- changed: db.r, db.s
SELECT c7 AS `a`, _ivm_weight
FROM (
  WITH _ivm_d AS (
    SELECT c2 AS c6, _ivm_weight
    FROM (
      SELECT c0 AS c2, _ivm_weight
      FROM (
        SELECT `a` AS c0, _ivm_weight
        FROM <db.r@delta>
      ) AS t1
    ) AS t2
    UNION ALL
    SELECT c5 AS c6, _ivm_weight
    FROM (
      SELECT c4 AS c5, _ivm_weight
      FROM (
        SELECT `c` AS c4, _ivm_weight
        FROM <db.s@delta>
      ) AS t3
    ) AS t4
  ),
  _ivm_p AS (
    SELECT `c6`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_count
    FROM (
      SELECT * FROM _ivm_d
    ) AS _ivm_c
    GROUP BY `c6`
    HAVING count(*) > 0
  ),
  _ivm_t AS (
    SELECT DISTINCT `c6` FROM _ivm_p
  ),
  _ivm_og AS (
    SELECT s.* FROM <state agg0.groups> AS s LEFT SEMI JOIN _ivm_t AS t ON s.`c6` <=> t.`c6`
  ),
  _ivm_gs AS (
    SELECT `c6`, inline(array(named_struct('_ivm_count', `_ivm_old_count`, '_ivm_side', CAST(-1 AS BIGINT)), named_struct('_ivm_count', `_ivm_count`, '_ivm_side', CAST(1 AS BIGINT))))
    FROM (
      SELECT `c6`, CAST(sum(CASE WHEN _ivm_is_old THEN `_ivm_count` END) AS BIGINT) AS `_ivm_old_count`, CAST(sum(`_ivm_count`) AS BIGINT) AS `_ivm_count`
      FROM (
        SELECT `c6`, `_ivm_count`, TRUE AS _ivm_is_old FROM _ivm_og
        UNION ALL
        SELECT `c6`, `_ivm_count`, FALSE AS _ivm_is_old FROM _ivm_p
      ) AS _ivm_u
      GROUP BY `c6`
    ) AS _ivm_on
  )
  SELECT `c7`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
  FROM (
    SELECT `c7`, CAST(1 AS BIGINT) * _ivm_side AS _ivm_weight
    FROM (
      SELECT _ivm_g.`c6` AS `c7`, coalesce(_ivm_g._ivm_count, 0) AS _ivm_count, _ivm_g._ivm_side
      FROM (
        SELECT * FROM _ivm_gs
      ) AS _ivm_g
      WHERE _ivm_g._ivm_count > 0
    ) AS _ivm_r
    WHERE CAST(1 AS BIGINT) > 0
  ) AS _ivm_x
  GROUP BY `c7`
  HAVING sum(_ivm_weight) <> 0
) AS _ivm_out;

-- case: INTERSECT counts each side's copies: present when both are positive
-- model: SELECT r.a FROM db.r AS r INTERSECT SELECT s.c FROM db.s AS s
-- changed: db.s
SELECT c18 AS `a`, _ivm_weight
FROM (
  SELECT c17 AS c18, _ivm_weight
  FROM (
    WITH _ivm_d AS (
      SELECT c12 AS c6, c13 AS c7, c14 AS c8, _ivm_weight
      FROM (
        SELECT c5 AS c12, CAST(NULL AS INT) AS c13, CAST(1 AS INT) AS c14, _ivm_weight
        FROM (
          SELECT c4 AS c5, _ivm_weight
          FROM (
            SELECT `c` AS c4, _ivm_weight
            FROM <db.s@delta>
          ) AS t1
        ) AS t2
      ) AS t3
    ),
    _ivm_p AS (
      SELECT `c6`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_count, CAST(0 AS BIGINT) AS `c15_s`, CAST(coalesce(sum(CASE WHEN `c7` IS NOT NULL THEN _ivm_weight END), 0) AS BIGINT) AS `c15_n`, CAST(0 AS BIGINT) AS `c16_s`, CAST(coalesce(sum(CASE WHEN `c8` IS NOT NULL THEN _ivm_weight END), 0) AS BIGINT) AS `c16_n`
      FROM (
        SELECT * FROM _ivm_d
      ) AS _ivm_c
      GROUP BY `c6`
      HAVING count(*) > 0
    ),
    _ivm_t AS (
      SELECT DISTINCT `c6` FROM _ivm_p
    ),
    _ivm_og AS (
      SELECT s.* FROM <state agg0.groups> AS s LEFT SEMI JOIN _ivm_t AS t ON s.`c6` <=> t.`c6`
    ),
    _ivm_gs AS (
      SELECT `c6`, inline(array(named_struct('_ivm_count', `_ivm_old_count`, 'c15_s', `_ivm_old_c15_s`, 'c15_n', `_ivm_old_c15_n`, 'c16_s', `_ivm_old_c16_s`, 'c16_n', `_ivm_old_c16_n`, '_ivm_side', CAST(-1 AS BIGINT)), named_struct('_ivm_count', `_ivm_count`, 'c15_s', `c15_s`, 'c15_n', `c15_n`, 'c16_s', `c16_s`, 'c16_n', `c16_n`, '_ivm_side', CAST(1 AS BIGINT))))
      FROM (
        SELECT `c6`, CAST(sum(CASE WHEN _ivm_is_old THEN `_ivm_count` END) AS BIGINT) AS `_ivm_old_count`, CASE WHEN count(CASE WHEN _ivm_is_old THEN 1 END) = count(CASE WHEN _ivm_is_old THEN `c15_s` END) THEN sum(CASE WHEN _ivm_is_old THEN `c15_s` END) END AS `_ivm_old_c15_s`, CAST(sum(CASE WHEN _ivm_is_old THEN `c15_n` END) AS BIGINT) AS `_ivm_old_c15_n`, CASE WHEN count(CASE WHEN _ivm_is_old THEN 1 END) = count(CASE WHEN _ivm_is_old THEN `c16_s` END) THEN sum(CASE WHEN _ivm_is_old THEN `c16_s` END) END AS `_ivm_old_c16_s`, CAST(sum(CASE WHEN _ivm_is_old THEN `c16_n` END) AS BIGINT) AS `_ivm_old_c16_n`, CAST(sum(`_ivm_count`) AS BIGINT) AS `_ivm_count`, CASE WHEN count(*) = count(`c15_s`) THEN sum(`c15_s`) END AS `c15_s`, CAST(sum(`c15_n`) AS BIGINT) AS `c15_n`, CASE WHEN count(*) = count(`c16_s`) THEN sum(`c16_s`) END AS `c16_s`, CAST(sum(`c16_n`) AS BIGINT) AS `c16_n`
        FROM (
          SELECT `c6`, `_ivm_count`, `c15_s`, `c15_n`, `c16_s`, `c16_n`, TRUE AS _ivm_is_old FROM _ivm_og
          UNION ALL
          SELECT `c6`, `_ivm_count`, `c15_s`, `c15_n`, `c16_s`, `c16_n`, FALSE AS _ivm_is_old FROM _ivm_p
        ) AS _ivm_u
        GROUP BY `c6`
      ) AS _ivm_on
    )
    SELECT `c17`, `c15`, `c16`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
    FROM (
      SELECT `c17`, `c15`, `c16`, CAST(IF(c15 > 0 AND c16 > 0, 1, 0) AS BIGINT) * _ivm_side AS _ivm_weight
      FROM (
        SELECT _ivm_g.`c6` AS `c17`, coalesce(_ivm_g.`c15_n`, 0) AS `c15`, coalesce(_ivm_g.`c16_n`, 0) AS `c16`, coalesce(_ivm_g._ivm_count, 0) AS _ivm_count, _ivm_g._ivm_side
        FROM (
          SELECT * FROM _ivm_gs
        ) AS _ivm_g
        WHERE _ivm_g._ivm_count > 0
      ) AS _ivm_r
      WHERE CAST(IF(c15 > 0 AND c16 > 0, 1, 0) AS BIGINT) > 0
    ) AS _ivm_x
    GROUP BY `c17`, `c15`, `c16`
    HAVING sum(_ivm_weight) <> 0
  ) AS t4
) AS _ivm_out;

-- case: EXCEPT ALL keeps left − right copies
-- model: SELECT r.a FROM db.r AS r EXCEPT ALL SELECT s.c FROM db.s AS s
-- changed: db.r
SELECT c18 AS `a`, _ivm_weight
FROM (
  SELECT c17 AS c18, _ivm_weight
  FROM (
    WITH _ivm_d AS (
      SELECT c9 AS c6, c10 AS c7, c11 AS c8, _ivm_weight
      FROM (
        SELECT c2 AS c9, CAST(1 AS INT) AS c10, CAST(NULL AS INT) AS c11, _ivm_weight
        FROM (
          SELECT c0 AS c2, _ivm_weight
          FROM (
            SELECT `a` AS c0, _ivm_weight
            FROM <db.r@delta>
          ) AS t1
        ) AS t2
      ) AS t3
    ),
    _ivm_p AS (
      SELECT `c6`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_count, CAST(0 AS BIGINT) AS `c15_s`, CAST(coalesce(sum(CASE WHEN `c7` IS NOT NULL THEN _ivm_weight END), 0) AS BIGINT) AS `c15_n`, CAST(0 AS BIGINT) AS `c16_s`, CAST(coalesce(sum(CASE WHEN `c8` IS NOT NULL THEN _ivm_weight END), 0) AS BIGINT) AS `c16_n`
      FROM (
        SELECT * FROM _ivm_d
      ) AS _ivm_c
      GROUP BY `c6`
      HAVING count(*) > 0
    ),
    _ivm_t AS (
      SELECT DISTINCT `c6` FROM _ivm_p
    ),
    _ivm_og AS (
      SELECT s.* FROM <state agg0.groups> AS s LEFT SEMI JOIN _ivm_t AS t ON s.`c6` <=> t.`c6`
    ),
    _ivm_gs AS (
      SELECT `c6`, inline(array(named_struct('_ivm_count', `_ivm_old_count`, 'c15_s', `_ivm_old_c15_s`, 'c15_n', `_ivm_old_c15_n`, 'c16_s', `_ivm_old_c16_s`, 'c16_n', `_ivm_old_c16_n`, '_ivm_side', CAST(-1 AS BIGINT)), named_struct('_ivm_count', `_ivm_count`, 'c15_s', `c15_s`, 'c15_n', `c15_n`, 'c16_s', `c16_s`, 'c16_n', `c16_n`, '_ivm_side', CAST(1 AS BIGINT))))
      FROM (
        SELECT `c6`, CAST(sum(CASE WHEN _ivm_is_old THEN `_ivm_count` END) AS BIGINT) AS `_ivm_old_count`, CASE WHEN count(CASE WHEN _ivm_is_old THEN 1 END) = count(CASE WHEN _ivm_is_old THEN `c15_s` END) THEN sum(CASE WHEN _ivm_is_old THEN `c15_s` END) END AS `_ivm_old_c15_s`, CAST(sum(CASE WHEN _ivm_is_old THEN `c15_n` END) AS BIGINT) AS `_ivm_old_c15_n`, CASE WHEN count(CASE WHEN _ivm_is_old THEN 1 END) = count(CASE WHEN _ivm_is_old THEN `c16_s` END) THEN sum(CASE WHEN _ivm_is_old THEN `c16_s` END) END AS `_ivm_old_c16_s`, CAST(sum(CASE WHEN _ivm_is_old THEN `c16_n` END) AS BIGINT) AS `_ivm_old_c16_n`, CAST(sum(`_ivm_count`) AS BIGINT) AS `_ivm_count`, CASE WHEN count(*) = count(`c15_s`) THEN sum(`c15_s`) END AS `c15_s`, CAST(sum(`c15_n`) AS BIGINT) AS `c15_n`, CASE WHEN count(*) = count(`c16_s`) THEN sum(`c16_s`) END AS `c16_s`, CAST(sum(`c16_n`) AS BIGINT) AS `c16_n`
        FROM (
          SELECT `c6`, `_ivm_count`, `c15_s`, `c15_n`, `c16_s`, `c16_n`, TRUE AS _ivm_is_old FROM _ivm_og
          UNION ALL
          SELECT `c6`, `_ivm_count`, `c15_s`, `c15_n`, `c16_s`, `c16_n`, FALSE AS _ivm_is_old FROM _ivm_p
        ) AS _ivm_u
        GROUP BY `c6`
      ) AS _ivm_on
    )
    SELECT `c17`, `c15`, `c16`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
    FROM (
      SELECT `c17`, `c15`, `c16`, CAST(GREATEST(c15 - c16, 0) AS BIGINT) * _ivm_side AS _ivm_weight
      FROM (
        SELECT _ivm_g.`c6` AS `c17`, coalesce(_ivm_g.`c15_n`, 0) AS `c15`, coalesce(_ivm_g.`c16_n`, 0) AS `c16`, coalesce(_ivm_g._ivm_count, 0) AS _ivm_count, _ivm_g._ivm_side
        FROM (
          SELECT * FROM _ivm_gs
        ) AS _ivm_g
        WHERE _ivm_g._ivm_count > 0
      ) AS _ivm_r
      WHERE CAST(GREATEST(c15 - c16, 0) AS BIGINT) > 0
    ) AS _ivm_x
    GROUP BY `c17`, `c15`, `c16`
    HAVING sum(_ivm_weight) <> 0
  ) AS t4
) AS _ivm_out;

-- case: an aggregate over a join: the join's change is the aggregate's child change
-- model: SELECT s.b, count(*) AS n FROM db.r AS r JOIN db.s AS s ON r.b = s.b GROUP BY s.b
-- changed: db.r
-- show: merge
SELECT c7 AS `b`, c8 AS `n`, _ivm_weight
FROM (
  SELECT c5 AS c7, c6 AS c8, _ivm_weight
  FROM (
    WITH _ivm_d AS (
      SELECT c2 AS c4, _ivm_weight
      FROM (
        SELECT /*+ BROADCAST(t1) */ t1.c1, t2.c2, t1._ivm_weight * t2._ivm_weight AS _ivm_weight
        FROM (
          SELECT `b` AS c1, _ivm_weight
          FROM <db.r@delta>
        ) AS t1
        JOIN (
          SELECT `b` AS c2, _ivm_weight
          FROM <db.s@old>
        ) AS t2
          ON (t1.c1 = t2.c2)
      ) AS t3
    ),
    _ivm_p AS (
      SELECT `c4`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_count
      FROM (
        SELECT * FROM _ivm_d
      ) AS _ivm_c
      GROUP BY `c4`
      HAVING count(*) > 0
    ),
    _ivm_t AS (
      SELECT DISTINCT `c4` FROM _ivm_p
    ),
    _ivm_og AS (
      SELECT s.* FROM (SELECT t.`b` AS `c4`, CAST(t.`n` AS BIGINT) AS `_ivm_count` FROM <state agg0.target> AS t) AS s LEFT SEMI JOIN _ivm_t AS t ON s.`c4` <=> t.`c4`
    ),
    _ivm_gs AS (
      SELECT `c4`, inline(array(named_struct('_ivm_count', `_ivm_old_count`, '_ivm_side', CAST(-1 AS BIGINT)), named_struct('_ivm_count', `_ivm_count`, '_ivm_side', CAST(1 AS BIGINT))))
      FROM (
        SELECT `c4`, CAST(sum(CASE WHEN _ivm_is_old THEN `_ivm_count` END) AS BIGINT) AS `_ivm_old_count`, CAST(sum(`_ivm_count`) AS BIGINT) AS `_ivm_count`
        FROM (
          SELECT `c4`, `_ivm_count`, TRUE AS _ivm_is_old FROM _ivm_og
          UNION ALL
          SELECT `c4`, `_ivm_count`, FALSE AS _ivm_is_old FROM _ivm_p
        ) AS _ivm_u
        GROUP BY `c4`
      ) AS _ivm_on
    )
    SELECT `c5`, `c6`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
    FROM (
      SELECT `c5`, `c6`, CAST(1 AS BIGINT) * _ivm_side AS _ivm_weight
      FROM (
        SELECT _ivm_g.`c4` AS `c5`, coalesce(_ivm_g._ivm_count, 0) AS `c6`, coalesce(_ivm_g._ivm_count, 0) AS _ivm_count, _ivm_g._ivm_side
        FROM (
          SELECT * FROM _ivm_gs
        ) AS _ivm_g
        WHERE CASE WHEN _ivm_g._ivm_count < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a group would become negative)') AS BIGINT) ELSE _ivm_g._ivm_count END > 0
      ) AS _ivm_r
      WHERE CAST(1 AS BIGINT) > 0
    ) AS _ivm_x
    GROUP BY `c5`, `c6`
    HAVING sum(_ivm_weight) <> 0
  ) AS t4
) AS _ivm_out;

-- case: nested aggregates: the outer one's child change is the inner one's change
-- model: SELECT q.n, count(*) AS groups FROM (SELECT r.a, count(*) AS n FROM db.r AS r GROUP BY r.a) AS q GROUP BY q.n
-- changed: db.r
-- show: merge
SELECT c10 AS `n`, c11 AS `groups`, _ivm_weight
FROM (
  SELECT c8 AS c10, c9 AS c11, _ivm_weight
  FROM (
    WITH _ivm_d AS (
      SELECT c6 AS c7, _ivm_weight
      FROM (
        SELECT c4 AS c6, _ivm_weight
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
            SELECT s.* FROM <state agg0.groups> AS s LEFT SEMI JOIN _ivm_t AS t ON s.`c2` <=> t.`c2`
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
              WHERE _ivm_g._ivm_count > 0
            ) AS _ivm_r
            WHERE CAST(1 AS BIGINT) > 0
          ) AS _ivm_x
          GROUP BY `c3`, `c4`
          HAVING sum(_ivm_weight) <> 0
        ) AS t2
      ) AS t3
    ),
    _ivm_p AS (
      SELECT `c7`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_count
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
      SELECT s.* FROM (SELECT t.`n` AS `c7`, CAST(t.`groups` AS BIGINT) AS `_ivm_count` FROM <state agg1.target> AS t) AS s LEFT SEMI JOIN _ivm_t AS t ON s.`c7` <=> t.`c7`
    ),
    _ivm_gs AS (
      SELECT `c7`, inline(array(named_struct('_ivm_count', `_ivm_old_count`, '_ivm_side', CAST(-1 AS BIGINT)), named_struct('_ivm_count', `_ivm_count`, '_ivm_side', CAST(1 AS BIGINT))))
      FROM (
        SELECT `c7`, CAST(sum(CASE WHEN _ivm_is_old THEN `_ivm_count` END) AS BIGINT) AS `_ivm_old_count`, CAST(sum(`_ivm_count`) AS BIGINT) AS `_ivm_count`
        FROM (
          SELECT `c7`, `_ivm_count`, TRUE AS _ivm_is_old FROM _ivm_og
          UNION ALL
          SELECT `c7`, `_ivm_count`, FALSE AS _ivm_is_old FROM _ivm_p
        ) AS _ivm_u
        GROUP BY `c7`
      ) AS _ivm_on
    )
    SELECT `c8`, `c9`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
    FROM (
      SELECT `c8`, `c9`, CAST(1 AS BIGINT) * _ivm_side AS _ivm_weight
      FROM (
        SELECT _ivm_g.`c7` AS `c8`, coalesce(_ivm_g._ivm_count, 0) AS `c9`, coalesce(_ivm_g._ivm_count, 0) AS _ivm_count, _ivm_g._ivm_side
        FROM (
          SELECT * FROM _ivm_gs
        ) AS _ivm_g
        WHERE CASE WHEN _ivm_g._ivm_count < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a group would become negative)') AS BIGINT) ELSE _ivm_g._ivm_count END > 0
      ) AS _ivm_r
      WHERE CAST(1 AS BIGINT) > 0
    ) AS _ivm_x
    GROUP BY `c8`, `c9`
    HAVING sum(_ivm_weight) <> 0
  ) AS t4
) AS _ivm_out;
-- update of state agg0.groups
MERGE INTO <state agg0.groups> AS s
USING (
  SELECT `c2`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_count
  FROM (
    SELECT c0 AS c2, _ivm_weight
    FROM (
      SELECT `a` AS c0, _ivm_weight
      FROM <db.r@delta>
    ) AS t1
  ) AS _ivm_c
  GROUP BY `c2`
  HAVING count(*) > 0
) AS d
ON s.`c2` <=> d.`c2`
WHEN MATCHED AND s._ivm_count + d._ivm_count = 0 THEN DELETE
WHEN MATCHED THEN UPDATE SET s._ivm_count = CASE WHEN s._ivm_count + d._ivm_count < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a group would become negative)') AS BIGINT) ELSE s._ivm_count + d._ivm_count END
WHEN NOT MATCHED AND d._ivm_count <> 0 THEN INSERT (`c2`, `_ivm_count`) VALUES (d.`c2`, CASE WHEN d._ivm_count < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a group would become negative)') AS BIGINT) ELSE d._ivm_count END);
