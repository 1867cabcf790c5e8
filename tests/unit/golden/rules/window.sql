-- Window functions with PARTITION BY (ivm_core/rules/window.py): the touched partitions' rows
-- read from the bag state above the window, the change added, the window evaluated over them
-- by Spark, minus the rows the state held.

-- case: the top row per key of a join (ROW_NUMBER … = 1): the window keeps its rows, the join is no target's
-- model: SELECT q.a, q.c FROM (SELECT r.a, s.c, row_number() OVER (PARTITION BY r.a ORDER BY s.c DESC) AS rn FROM db.r AS r JOIN db.s AS s ON r.b = s.b) AS q WHERE q.rn = 1
-- changed: db.r
-- show: build, merge
SELECT c11 AS `a`, c12 AS `c`, _ivm_weight
FROM (
  SELECT c8 AS c11, c9 AS c12, _ivm_weight
  FROM (
    SELECT *
    FROM (
      SELECT c5 AS c8, c6 AS c9, c7 AS c10, _ivm_weight
      FROM (
        SELECT `c0` AS `c5`, `c3` AS `c6`, `c4` AS `c7`, _ivm_weight
        FROM (
          WITH _ivm_d AS (
            SELECT c0 AS c0, c3 AS c3, _ivm_weight
            FROM (
              SELECT /*+ BROADCAST(t2) */ t2.c0, t2.c1, t3.c2, t3.c3, t2._ivm_weight * t3._ivm_weight AS _ivm_weight
              FROM (
                SELECT `a` AS c0, `b` AS c1, _ivm_weight
                FROM <db.r@delta>
              ) AS t2
              JOIN (
                SELECT `b` AS c2, `c` AS c3, _ivm_weight
                FROM <db.s@old>
              ) AS t3
                ON (t2.c1 = t3.c2)
            ) AS t4
          ),
          _ivm_k AS (
            SELECT DISTINCT `c0` FROM _ivm_d
          ),
          _ivm_o AS (
            SELECT /*+ BROADCAST(k) */ s.* FROM (
              SELECT `c5` AS c0, `c6` AS c3, `c7` AS c4, _ivm_weight
              FROM (
                SELECT `c0` AS `c5`, `c3` AS `c6`, `c4` AS `c7`, CAST(_ivm_count AS BIGINT) AS _ivm_weight
                FROM <state agg0.groups>
              ) AS t1
            ) AS s
            LEFT SEMI JOIN _ivm_k AS k ON s.`c0` <=> k.`c0`
          ),
          _ivm_n AS (
            SELECT `c0`, `c3`, CASE WHEN CAST(sum(_ivm_weight) AS BIGINT) < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a row would become negative)') AS BIGINT) ELSE CAST(sum(_ivm_weight) AS BIGINT) END AS _ivm_weight
            FROM (
              SELECT `c0`, `c3`, _ivm_weight FROM (
                SELECT * FROM _ivm_o
              ) AS _ivm_term0
              UNION ALL
              SELECT `c0`, `c3`, _ivm_weight FROM (
                SELECT * FROM _ivm_d
              ) AS _ivm_term1
            ) AS _ivm_z
            GROUP BY `c0`, `c3`
            HAVING sum(_ivm_weight) <> 0
          )
          SELECT `c0`, `c3`, `c4`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
          FROM (
            SELECT `c0`, `c3`, `c4`, _ivm_weight FROM (
              SELECT `c0`, `c3`, ROW_NUMBER() OVER (PARTITION BY c0 ORDER BY c3 DESC) AS `c4`, CAST(1 AS BIGINT) AS _ivm_weight
              FROM (
                SELECT * FROM _ivm_n
              ) AS _ivm_b
              LATERAL VIEW explode(sequence(1, _ivm_weight)) _ivm_a AS _ivm_copy
            ) AS _ivm_term0
            UNION ALL
            SELECT `c0`, `c3`, `c4`, -_ivm_weight AS _ivm_weight FROM (
              SELECT * FROM _ivm_o
            ) AS _ivm_term1
          ) AS _ivm_z
          GROUP BY `c0`, `c3`, `c4`
          HAVING sum(_ivm_weight) <> 0
        ) AS _ivm_d
      ) AS t5
    ) AS t6
    WHERE (c10 = 1)
  ) AS t7
) AS _ivm_out;
-- build of state agg0.groups
SELECT `c0`, `c3`, `c4`, CAST(_ivm_weight AS BIGINT) AS _ivm_count
FROM (
  SELECT `c0`, `c3`, ROW_NUMBER() OVER (PARTITION BY c0 ORDER BY c3 DESC) AS `c4`, CAST(1 AS BIGINT) AS _ivm_weight
  FROM (
    SELECT `c0`, `c3`, CASE WHEN CAST(sum(_ivm_weight) AS BIGINT) < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a row would become negative)') AS BIGINT) ELSE CAST(sum(_ivm_weight) AS BIGINT) END AS _ivm_weight
    FROM (
      SELECT c0 AS c0, c3 AS c3, _ivm_weight
      FROM (
        SELECT t1.c0, t1.c1, t2.c2, t2.c3, t1._ivm_weight * t2._ivm_weight AS _ivm_weight
        FROM (
          SELECT `a` AS c0, `b` AS c1, _ivm_weight
          FROM <db.r@old>
        ) AS t1
        JOIN (
          SELECT `b` AS c2, `c` AS c3, _ivm_weight
          FROM <db.s@old>
        ) AS t2
          ON (t1.c1 = t2.c2)
      ) AS t3
    ) AS _ivm_z
    GROUP BY `c0`, `c3`
    HAVING sum(_ivm_weight) <> 0
  ) AS _ivm_b
  LATERAL VIEW explode(sequence(1, _ivm_weight)) _ivm_a AS _ivm_copy
) AS _ivm_c
WHERE _ivm_weight <> 0;
-- update of state agg0.groups
INSERT INTO <state agg0.groups> (`c0`, `c3`, `c4`, `_ivm_count`)
SELECT `c0`, `c3`, `c4`, CAST(_ivm_weight AS BIGINT) AS _ivm_count
FROM (
  WITH _ivm_d AS (
    SELECT c0 AS c0, c3 AS c3, _ivm_weight
    FROM (
      SELECT /*+ BROADCAST(t2) */ t2.c0, t2.c1, t3.c2, t3.c3, t2._ivm_weight * t3._ivm_weight AS _ivm_weight
      FROM (
        SELECT `a` AS c0, `b` AS c1, _ivm_weight
        FROM <db.r@delta>
      ) AS t2
      JOIN (
        SELECT `b` AS c2, `c` AS c3, _ivm_weight
        FROM <db.s@old>
      ) AS t3
        ON (t2.c1 = t3.c2)
    ) AS t4
  ),
  _ivm_k AS (
    SELECT DISTINCT `c0` FROM _ivm_d
  ),
  _ivm_o AS (
    SELECT /*+ BROADCAST(k) */ s.* FROM (
      SELECT `c5` AS c0, `c6` AS c3, `c7` AS c4, _ivm_weight
      FROM (
        SELECT `c0` AS `c5`, `c3` AS `c6`, `c4` AS `c7`, CAST(_ivm_count AS BIGINT) AS _ivm_weight
        FROM <state agg0.groups>
      ) AS t1
    ) AS s
    LEFT SEMI JOIN _ivm_k AS k ON s.`c0` <=> k.`c0`
  ),
  _ivm_n AS (
    SELECT `c0`, `c3`, CASE WHEN CAST(sum(_ivm_weight) AS BIGINT) < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a row would become negative)') AS BIGINT) ELSE CAST(sum(_ivm_weight) AS BIGINT) END AS _ivm_weight
    FROM (
      SELECT `c0`, `c3`, _ivm_weight FROM (
        SELECT * FROM _ivm_o
      ) AS _ivm_term0
      UNION ALL
      SELECT `c0`, `c3`, _ivm_weight FROM (
        SELECT * FROM _ivm_d
      ) AS _ivm_term1
    ) AS _ivm_z
    GROUP BY `c0`, `c3`
    HAVING sum(_ivm_weight) <> 0
  )
  SELECT `c0`, `c3`, `c4`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
  FROM (
    SELECT `c0`, `c3`, `c4`, _ivm_weight FROM (
      SELECT `c0`, `c3`, ROW_NUMBER() OVER (PARTITION BY c0 ORDER BY c3 DESC) AS `c4`, CAST(1 AS BIGINT) AS _ivm_weight
      FROM (
        SELECT * FROM _ivm_n
      ) AS _ivm_b
      LATERAL VIEW explode(sequence(1, _ivm_weight)) _ivm_a AS _ivm_copy
    ) AS _ivm_term0
    UNION ALL
    SELECT `c0`, `c3`, `c4`, -_ivm_weight AS _ivm_weight FROM (
      SELECT * FROM _ivm_o
    ) AS _ivm_term1
  ) AS _ivm_z
  GROUP BY `c0`, `c3`, `c4`
  HAVING sum(_ivm_weight) <> 0
) AS _ivm_c
WHERE _ivm_weight <> 0;

-- case: two windows over two partitionings: one window node and one bag state each
-- model: SELECT r.a, s.c, count(*) OVER (PARTITION BY s.c) AS n, lag(r.a, 1, 0) OVER (PARTITION BY r.b ORDER BY r.a) AS l FROM db.r AS r JOIN db.s AS s ON r.b = s.b
-- changed: db.s
SELECT c15 AS `a`, c16 AS `c`, c17 AS `n`, c18 AS `l`, _ivm_weight
FROM (
  SELECT c10 AS c15, c12 AS c16, c13 AS c17, c14 AS c18, _ivm_weight
  FROM (
    SELECT `c5` AS `c10`, `c6` AS `c11`, `c7` AS `c12`, `c8` AS `c13`, `c9` AS `c14`, _ivm_weight
    FROM (
      WITH _ivm_d AS (
        SELECT `c0` AS `c5`, `c1` AS `c6`, `c3` AS `c7`, `c4` AS `c8`, _ivm_weight
        FROM (
          WITH _ivm_d AS (
            SELECT c0 AS c0, c1 AS c1, c3 AS c3, _ivm_weight
            FROM (
              SELECT c0 AS c0, c1 AS c1, c2 AS c2, c3 AS c3, _ivm_weight
              FROM (
                SELECT /*+ BROADCAST(t3) */ t3.c2, t3.c3, t4.c0, t4.c1, t3._ivm_weight * t4._ivm_weight AS _ivm_weight
                FROM (
                  SELECT `b` AS c2, `c` AS c3, _ivm_weight
                  FROM <db.s@delta>
                ) AS t3
                JOIN (
                  SELECT `a` AS c0, `b` AS c1, _ivm_weight
                  FROM <db.r@new>
                ) AS t4
                  ON (t4.c1 = t3.c2)
              ) AS t5
            ) AS t6
          ),
          _ivm_k AS (
            SELECT DISTINCT `c3` FROM _ivm_d
          ),
          _ivm_o AS (
            SELECT /*+ BROADCAST(k) */ s.* FROM (
              SELECT `c5` AS c0, `c6` AS c1, `c7` AS c3, `c8` AS c4, _ivm_weight
              FROM (
                SELECT `c0` AS `c5`, `c1` AS `c6`, `c3` AS `c7`, `c4` AS `c8`, CAST(_ivm_count AS BIGINT) AS _ivm_weight
                FROM <state agg0.groups>
              ) AS t2
            ) AS s
            LEFT SEMI JOIN _ivm_k AS k ON s.`c3` <=> k.`c3`
          ),
          _ivm_n AS (
            SELECT `c0`, `c1`, `c3`, CASE WHEN CAST(sum(_ivm_weight) AS BIGINT) < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a row would become negative)') AS BIGINT) ELSE CAST(sum(_ivm_weight) AS BIGINT) END AS _ivm_weight
            FROM (
              SELECT `c0`, `c1`, `c3`, _ivm_weight FROM (
                SELECT * FROM _ivm_o
              ) AS _ivm_term0
              UNION ALL
              SELECT `c0`, `c1`, `c3`, _ivm_weight FROM (
                SELECT * FROM _ivm_d
              ) AS _ivm_term1
            ) AS _ivm_z
            GROUP BY `c0`, `c1`, `c3`
            HAVING sum(_ivm_weight) <> 0
          )
          SELECT `c0`, `c1`, `c3`, `c4`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
          FROM (
            SELECT `c0`, `c1`, `c3`, `c4`, _ivm_weight FROM (
              SELECT `c0`, `c1`, `c3`, COUNT(*) OVER (PARTITION BY c3) AS `c4`, CAST(1 AS BIGINT) AS _ivm_weight
              FROM (
                SELECT * FROM _ivm_n
              ) AS _ivm_b
              LATERAL VIEW explode(sequence(1, _ivm_weight)) _ivm_a AS _ivm_copy
            ) AS _ivm_term0
            UNION ALL
            SELECT `c0`, `c1`, `c3`, `c4`, -_ivm_weight AS _ivm_weight FROM (
              SELECT * FROM _ivm_o
            ) AS _ivm_term1
          ) AS _ivm_z
          GROUP BY `c0`, `c1`, `c3`, `c4`
          HAVING sum(_ivm_weight) <> 0
        ) AS _ivm_d
      ),
      _ivm_k AS (
        SELECT DISTINCT `c6` FROM _ivm_d
      ),
      _ivm_o AS (
        SELECT /*+ BROADCAST(k) */ s.* FROM (
          SELECT `c10` AS c5, `c11` AS c6, `c12` AS c7, `c13` AS c8, `c14` AS c9, _ivm_weight
          FROM (
            SELECT `c5` AS `c10`, `c6` AS `c11`, `c7` AS `c12`, `c8` AS `c13`, `c9` AS `c14`, CAST(_ivm_count AS BIGINT) AS _ivm_weight
            FROM <state agg1.groups>
          ) AS t1
        ) AS s
        LEFT SEMI JOIN _ivm_k AS k ON s.`c6` <=> k.`c6`
      ),
      _ivm_n AS (
        SELECT `c5`, `c6`, `c7`, `c8`, CASE WHEN CAST(sum(_ivm_weight) AS BIGINT) < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a row would become negative)') AS BIGINT) ELSE CAST(sum(_ivm_weight) AS BIGINT) END AS _ivm_weight
        FROM (
          SELECT `c5`, `c6`, `c7`, `c8`, _ivm_weight FROM (
            SELECT * FROM _ivm_o
          ) AS _ivm_term0
          UNION ALL
          SELECT `c5`, `c6`, `c7`, `c8`, _ivm_weight FROM (
            SELECT * FROM _ivm_d
          ) AS _ivm_term1
        ) AS _ivm_z
        GROUP BY `c5`, `c6`, `c7`, `c8`
        HAVING sum(_ivm_weight) <> 0
      )
      SELECT `c5`, `c6`, `c7`, `c8`, `c9`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
      FROM (
        SELECT `c5`, `c6`, `c7`, `c8`, `c9`, _ivm_weight FROM (
          SELECT `c5`, `c6`, `c7`, `c8`, LAG(c5, 1, 0) OVER (PARTITION BY c6 ORDER BY c5) AS `c9`, CAST(1 AS BIGINT) AS _ivm_weight
          FROM (
            SELECT * FROM _ivm_n
          ) AS _ivm_b
          LATERAL VIEW explode(sequence(1, _ivm_weight)) _ivm_a AS _ivm_copy
        ) AS _ivm_term0
        UNION ALL
        SELECT `c5`, `c6`, `c7`, `c8`, `c9`, -_ivm_weight AS _ivm_weight FROM (
          SELECT * FROM _ivm_o
        ) AS _ivm_term1
      ) AS _ivm_z
      GROUP BY `c5`, `c6`, `c7`, `c8`, `c9`
      HAVING sum(_ivm_weight) <> 0
    ) AS _ivm_d
  ) AS t7
) AS _ivm_out;

-- case: a window over an aggregate, partitioned by an expression (computed as a column first)
-- model: SELECT r.a, sum(r.b) AS s, rank() OVER (PARTITION BY r.a > 1 ORDER BY sum(r.b) DESC) AS k FROM db.r AS r GROUP BY r.a
-- changed: db.r
SELECT c12 AS `a`, c13 AS `s`, c14 AS `k`, _ivm_weight
FROM (
  SELECT c8 AS c12, c9 AS c13, c11 AS c14, _ivm_weight
  FROM (
    SELECT `c3` AS `c8`, `c5` AS `c9`, `c6` AS `c10`, `c7` AS `c11`, _ivm_weight
    FROM (
      WITH _ivm_d AS (
        SELECT c3 AS c3, c5 AS c5, c3 > 1 AS c6, _ivm_weight
        FROM (
          WITH _ivm_d AS (
            SELECT c0 AS c2, c1 AS c4, _ivm_weight
            FROM (
              SELECT `a` AS c0, `b` AS c1, _ivm_weight
              FROM <db.r@delta>
            ) AS t2
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
        ) AS t3
      ),
      _ivm_k AS (
        SELECT DISTINCT `c6` FROM _ivm_d
      ),
      _ivm_o AS (
        SELECT /*+ BROADCAST(k) */ s.* FROM (
          SELECT `c8` AS c3, `c9` AS c5, `c10` AS c6, `c11` AS c7, _ivm_weight
          FROM (
            SELECT `c3` AS `c8`, `c5` AS `c9`, `c6` AS `c10`, `c7` AS `c11`, CAST(_ivm_count AS BIGINT) AS _ivm_weight
            FROM <state agg1.groups>
          ) AS t1
        ) AS s
        LEFT SEMI JOIN _ivm_k AS k ON s.`c6` <=> k.`c6`
      ),
      _ivm_n AS (
        SELECT `c3`, `c5`, `c6`, CASE WHEN CAST(sum(_ivm_weight) AS BIGINT) < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a row would become negative)') AS BIGINT) ELSE CAST(sum(_ivm_weight) AS BIGINT) END AS _ivm_weight
        FROM (
          SELECT `c3`, `c5`, `c6`, _ivm_weight FROM (
            SELECT * FROM _ivm_o
          ) AS _ivm_term0
          UNION ALL
          SELECT `c3`, `c5`, `c6`, _ivm_weight FROM (
            SELECT * FROM _ivm_d
          ) AS _ivm_term1
        ) AS _ivm_z
        GROUP BY `c3`, `c5`, `c6`
        HAVING sum(_ivm_weight) <> 0
      )
      SELECT `c3`, `c5`, `c6`, `c7`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
      FROM (
        SELECT `c3`, `c5`, `c6`, `c7`, _ivm_weight FROM (
          SELECT `c3`, `c5`, `c6`, RANK() OVER (PARTITION BY c6 ORDER BY c5 DESC) AS `c7`, CAST(1 AS BIGINT) AS _ivm_weight
          FROM (
            SELECT * FROM _ivm_n
          ) AS _ivm_b
          LATERAL VIEW explode(sequence(1, _ivm_weight)) _ivm_a AS _ivm_copy
        ) AS _ivm_term0
        UNION ALL
        SELECT `c3`, `c5`, `c6`, `c7`, -_ivm_weight AS _ivm_weight FROM (
          SELECT * FROM _ivm_o
        ) AS _ivm_term1
      ) AS _ivm_z
      GROUP BY `c3`, `c5`, `c6`, `c7`
      HAVING sum(_ivm_weight) <> 0
    ) AS _ivm_d
  ) AS t4
) AS _ivm_out;
