-- Top-k (ivm_core/top_k.py): ORDER BY … LIMIT k [OFFSET n] ending the model. The change is added
-- to the state of the ranked rows; the target is rewritten as the top rows read from it.

-- case: over one aggregate: its state is the ranked rows' state; k + n distinct rows, then places n+1 … n+k
-- model: SELECT r.b, sum(r.a) AS total FROM db.r AS r GROUP BY r.b ORDER BY total DESC, 1 LIMIT 2 OFFSET 1
-- changed: db.r
-- show: result
SELECT c6 AS `b`, c7 AS `total`, _ivm_weight
FROM (
  SELECT c3 AS c6, c5 AS c7, _ivm_weight
  FROM (
    WITH _ivm_d AS (
      SELECT c1 AS c2, c0 AS c4, _ivm_weight
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
        SELECT _ivm_g.`c2` AS `c3`, CASE WHEN coalesce(_ivm_g.`c5_n`, 0) > 0 THEN CAST(_ivm_g.`c5_s` AS bigint) END AS `c5`, coalesce(_ivm_g._ivm_count, 0) AS _ivm_count, _ivm_g._ivm_side
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
-- the result read from the updated state
SELECT `b`, `total`, CAST(1 AS BIGINT) AS _ivm_weight FROM (
  SELECT `b`, `total`, _ivm_weight FROM (
    SELECT c6 AS `b`, c7 AS `total`, _ivm_weight
    FROM (
      SELECT c3 AS c6, c5 AS c7, _ivm_weight
      FROM (
        SELECT `c3`, `c5`, CAST(1 AS BIGINT) AS _ivm_weight
        FROM (
          SELECT _ivm_g.`c2` AS `c3`, CASE WHEN coalesce(_ivm_g.`c5_n`, 0) > 0 THEN CAST(_ivm_g.`c5_s` AS bigint) END AS `c5`, coalesce(_ivm_g._ivm_count, 0) AS _ivm_count
          FROM (
            SELECT * FROM <state agg0.groups>
          ) AS _ivm_g
          WHERE _ivm_g._ivm_count > 0
        ) AS _ivm_r
        WHERE CAST(1 AS BIGINT) > 0
      ) AS t1
    ) AS _ivm_out
  ) AS _ivm_p
  WHERE _ivm_weight > 0
  ORDER BY `total` DESC NULLS LAST, `b` ASC NULLS FIRST
  LIMIT 3
) AS _ivm_first
LATERAL VIEW explode(sequence(1, _ivm_weight)) _ivm_a AS _ivm_copy
ORDER BY `total` DESC NULLS LAST, `b` ASC NULLS FIRST
LIMIT 2 OFFSET 1;

-- case: over a join: a bag state (every column a key, the copies its weight), rows repeated by their copies
-- model: SELECT r.a, s.c FROM db.r AS r JOIN db.s AS s ON r.b = s.b ORDER BY s.c NULLS LAST LIMIT 3
-- changed: db.s
-- show: merge, result
SELECT c8 AS `a`, c9 AS `c`, _ivm_weight
FROM (
  SELECT c6 AS c8, c7 AS c9, _ivm_weight
  FROM (
    SELECT `c4` AS `c6`, `c5` AS `c7`, _ivm_weight
    FROM (
      SELECT c0 AS c4, c3 AS c5, _ivm_weight
      FROM (
        SELECT c0 AS c0, c1 AS c1, c2 AS c2, c3 AS c3, _ivm_weight
        FROM (
          SELECT /*+ BROADCAST(t1) */ t1.c2, t1.c3, t2.c0, t2.c1, t1._ivm_weight * t2._ivm_weight AS _ivm_weight
          FROM (
            SELECT `b` AS c2, `c` AS c3, _ivm_weight
            FROM <db.s@delta>
          ) AS t1
          JOIN (
            SELECT `a` AS c0, `b` AS c1, _ivm_weight
            FROM <db.r@new>
          ) AS t2
            ON (t2.c1 = t1.c2)
        ) AS t3
      ) AS t4
    ) AS _ivm_d
  ) AS t5
) AS _ivm_out;
-- update of state agg0.groups
MERGE INTO <state agg0.groups> AS s
USING (
  SELECT `c4`, `c5`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_count
  FROM (
    SELECT c0 AS c4, c3 AS c5, _ivm_weight
    FROM (
      SELECT c0 AS c0, c1 AS c1, c2 AS c2, c3 AS c3, _ivm_weight
      FROM (
        SELECT /*+ BROADCAST(t1) */ t1.c2, t1.c3, t2.c0, t2.c1, t1._ivm_weight * t2._ivm_weight AS _ivm_weight
        FROM (
          SELECT `b` AS c2, `c` AS c3, _ivm_weight
          FROM <db.s@delta>
        ) AS t1
        JOIN (
          SELECT `a` AS c0, `b` AS c1, _ivm_weight
          FROM <db.r@new>
        ) AS t2
          ON (t2.c1 = t1.c2)
      ) AS t3
    ) AS t4
  ) AS _ivm_c
  GROUP BY `c4`, `c5`
  HAVING count(*) > 0
) AS d
ON s.`c4` <=> d.`c4` AND s.`c5` <=> d.`c5`
WHEN MATCHED AND s._ivm_count + d._ivm_count = 0 THEN DELETE
WHEN MATCHED THEN UPDATE SET s._ivm_count = CASE WHEN s._ivm_count + d._ivm_count < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a group would become negative)') AS BIGINT) ELSE s._ivm_count + d._ivm_count END
WHEN NOT MATCHED AND d._ivm_count <> 0 THEN INSERT (`c4`, `c5`, `_ivm_count`) VALUES (d.`c4`, d.`c5`, CASE WHEN d._ivm_count < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a group would become negative)') AS BIGINT) ELSE d._ivm_count END);
-- the result read from the updated state
SELECT `a`, `c`, CAST(1 AS BIGINT) AS _ivm_weight FROM (
  SELECT `a`, `c`, _ivm_weight FROM (
    SELECT c8 AS `a`, c9 AS `c`, _ivm_weight
    FROM (
      SELECT c6 AS c8, c7 AS c9, _ivm_weight
      FROM (
        SELECT `c6`, `c7`, CAST(_ivm_count AS BIGINT) AS _ivm_weight
        FROM (
          SELECT _ivm_g.`c4` AS `c6`, _ivm_g.`c5` AS `c7`, coalesce(_ivm_g._ivm_count, 0) AS _ivm_count
          FROM (
            SELECT * FROM <state agg0.groups>
          ) AS _ivm_g
          WHERE _ivm_g._ivm_count > 0
        ) AS _ivm_r
        WHERE CAST(_ivm_count AS BIGINT) > 0
      ) AS t1
    ) AS _ivm_out
  ) AS _ivm_p
  WHERE _ivm_weight > 0
  ORDER BY `c` ASC NULLS LAST
  LIMIT 3
) AS _ivm_first
LATERAL VIEW explode(sequence(1, _ivm_weight)) _ivm_a AS _ivm_copy
ORDER BY `c` ASC NULLS LAST
LIMIT 3;
