-- rules/window_result.py: a window at the top of the model, kept by its target. The change
-- recomputes the partitions the change touches (_ivm_k) from the window's child after the change
-- (_ivm_n) and retracts the target's rows of those partitions: no state. When the target holds
-- each partition's top rows whole and the change only inserts, the touched partitions are ranked
-- again from the target's rows and the inserted ones: the inputs are not read.

-- case: the dedup pattern: the latest row per key (ROW_NUMBER … = 1)
-- model: SELECT q.a, q.b FROM (SELECT r.a, r.b, row_number() OVER (PARTITION BY r.a ORDER BY r.b DESC) AS rn FROM db.r AS r) AS q WHERE q.rn = 1
-- changed: db.r
SELECT c9 AS `a`, c10 AS `b`, _ivm_weight
FROM (
  WITH _ivm_d AS (
    SELECT c0 AS c0, c1 AS c1, _ivm_weight
    FROM (
      SELECT `a` AS c0, `b` AS c1, _ivm_weight
      FROM <db.r@delta>
    ) AS t1
  ),
  _ivm_k AS (
    SELECT DISTINCT `c0` FROM _ivm_d
  ),
  _ivm_n AS (
    SELECT /*+ BROADCAST(k) */ s.* FROM (
      SELECT c0 AS c0, c1 AS c1, _ivm_weight
      FROM (
        SELECT `a` AS c0, `b` AS c1, _ivm_weight
        FROM <db.r@new>
      ) AS t2
    ) AS s
    LEFT SEMI JOIN _ivm_k AS k ON s.`c0` <=> k.`c0`
  )
  SELECT `c9`, `c10`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
  FROM (
    SELECT `c9`, `c10`, _ivm_weight FROM (
      SELECT c6 AS c9, c7 AS c10, _ivm_weight
      FROM (
        SELECT *
        FROM (
          SELECT c3 AS c6, c4 AS c7, c5 AS c8, _ivm_weight
          FROM (
            SELECT c0 AS c3, c1 AS c4, c2 AS c5, _ivm_weight
            FROM (
              SELECT `c0`, `c1`, ROW_NUMBER() OVER (PARTITION BY c0 ORDER BY c1 DESC) AS `c2`, CAST(1 AS BIGINT) AS _ivm_weight
              FROM (
                SELECT `c0`, `c1`, CASE WHEN CAST(sum(_ivm_weight) AS BIGINT) < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a row would become negative)') AS BIGINT) ELSE CAST(sum(_ivm_weight) AS BIGINT) END AS _ivm_weight
                FROM (
                  SELECT `c0` AS c0, `c1` AS c1, _ivm_weight
                  FROM _ivm_n
                ) AS _ivm_z
                GROUP BY `c0`, `c1`
                HAVING sum(_ivm_weight) <> 0
              ) AS _ivm_b
              LATERAL VIEW explode(sequence(1, _ivm_weight)) _ivm_a AS _ivm_copy
            ) AS t3
          ) AS t4
        ) AS t5
        WHERE (c8 = 1)
      ) AS t6
    ) AS _ivm_term0
    UNION ALL
    SELECT `c9`, `c10`, -_ivm_weight AS _ivm_weight FROM (
      SELECT /*+ BROADCAST(k) */ s.* FROM (
        SELECT `a` AS c9, `b` AS c10, CAST(1 AS BIGINT) AS _ivm_weight
        FROM <target>
      ) AS s
      LEFT SEMI JOIN _ivm_k AS k ON s.`c9` <=> k.`c0`
    ) AS _ivm_term1
  ) AS _ivm_z
  GROUP BY `c9`, `c10`
  HAVING sum(_ivm_weight) <> 0
) AS _ivm_out;

-- case: a running total over two inputs' union: the partitions either input's change touches, both read after it
-- model: SELECT u.x, u.y, sum(u.y) OVER (PARTITION BY u.x ORDER BY u.y) AS run FROM (SELECT r.a AS x, r.b AS y FROM db.r AS r UNION ALL SELECT s.b, s.c FROM db.s AS s) AS u
-- changed: db.r, db.s
SELECT c14 AS `x`, c15 AS `y`, c16 AS `run`, _ivm_weight
FROM (
  WITH _ivm_d AS (
    SELECT c8 AS c8, c9 AS c9, _ivm_weight
    FROM (
      SELECT c2 AS c8, c3 AS c9, _ivm_weight
      FROM (
        SELECT c0 AS c2, c1 AS c3, _ivm_weight
        FROM (
          SELECT `a` AS c0, `b` AS c1, _ivm_weight
          FROM <db.r@delta>
        ) AS t1
      ) AS t2
      UNION ALL
      SELECT c6 AS c8, c7 AS c9, _ivm_weight
      FROM (
        SELECT c4 AS c6, c5 AS c7, _ivm_weight
        FROM (
          SELECT `b` AS c4, `c` AS c5, _ivm_weight
          FROM <db.s@delta>
        ) AS t3
      ) AS t4
    ) AS t5
  ),
  _ivm_k AS (
    SELECT DISTINCT `c8` FROM _ivm_d
  ),
  _ivm_n AS (
    SELECT /*+ BROADCAST(k) */ s.* FROM (
      SELECT c8 AS c8, c9 AS c9, _ivm_weight
      FROM (
        SELECT c2 AS c8, c3 AS c9, _ivm_weight
        FROM (
          SELECT c0 AS c2, c1 AS c3, _ivm_weight
          FROM (
            SELECT `a` AS c0, `b` AS c1, _ivm_weight
            FROM <db.r@new>
          ) AS t6
        ) AS t7
        UNION ALL
        SELECT c6 AS c8, c7 AS c9, _ivm_weight
        FROM (
          SELECT c4 AS c6, c5 AS c7, _ivm_weight
          FROM (
            SELECT `b` AS c4, `c` AS c5, _ivm_weight
            FROM <db.s@new>
          ) AS t8
        ) AS t9
      ) AS t10
    ) AS s
    LEFT SEMI JOIN _ivm_k AS k ON s.`c8` <=> k.`c8`
  )
  SELECT `c14`, `c15`, `c16`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
  FROM (
    SELECT `c14`, `c15`, `c16`, _ivm_weight FROM (
      SELECT c11 AS c14, c12 AS c15, c13 AS c16, _ivm_weight
      FROM (
        SELECT c8 AS c11, c9 AS c12, c10 AS c13, _ivm_weight
        FROM (
          SELECT `c8`, `c9`, SUM(c9) OVER (PARTITION BY c8 ORDER BY c9) AS `c10`, CAST(1 AS BIGINT) AS _ivm_weight
          FROM (
            SELECT `c8`, `c9`, CASE WHEN CAST(sum(_ivm_weight) AS BIGINT) < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a row would become negative)') AS BIGINT) ELSE CAST(sum(_ivm_weight) AS BIGINT) END AS _ivm_weight
            FROM (
              SELECT `c8` AS c8, `c9` AS c9, _ivm_weight
              FROM _ivm_n
            ) AS _ivm_z
            GROUP BY `c8`, `c9`
            HAVING sum(_ivm_weight) <> 0
          ) AS _ivm_b
          LATERAL VIEW explode(sequence(1, _ivm_weight)) _ivm_a AS _ivm_copy
        ) AS t11
      ) AS t12
    ) AS _ivm_term0
    UNION ALL
    SELECT `c14`, `c15`, `c16`, -_ivm_weight AS _ivm_weight FROM (
      SELECT /*+ BROADCAST(k) */ s.* FROM (
        SELECT `x` AS c14, `y` AS c15, `run` AS c16, CAST(1 AS BIGINT) AS _ivm_weight
        FROM <target>
      ) AS s
      LEFT SEMI JOIN _ivm_k AS k ON s.`c14` <=> k.`c8`
    ) AS _ivm_term1
  ) AS _ivm_z
  GROUP BY `c14`, `c15`, `c16`
  HAVING sum(_ivm_weight) <> 0
) AS _ivm_out;

-- case: the dedup over a change that only inserts: ranked from the target's rows and the inserts
-- model: SELECT q.a, q.b FROM (SELECT r.a, r.b, row_number() OVER (PARTITION BY r.a ORDER BY r.b DESC) AS rn FROM db.r AS r) AS q WHERE q.rn = 1
-- changed: db.r
-- inserting: db.r
SELECT c9 AS `a`, c10 AS `b`, _ivm_weight
FROM (
  WITH _ivm_d AS (
    SELECT c0 AS c0, c1 AS c1, _ivm_weight
    FROM (
      SELECT `a` AS c0, `b` AS c1, _ivm_weight
      FROM <db.r@delta>
    ) AS t1
  ),
  _ivm_k AS (
    SELECT DISTINCT `c0` FROM _ivm_d
  ),
  _ivm_n AS (
    SELECT h.`c9` AS `c0`, h.`c10` AS `c1`, h._ivm_weight FROM (
      SELECT /*+ BROADCAST(k) */ s.* FROM (
        SELECT `a` AS c9, `b` AS c10, CAST(1 AS BIGINT) AS _ivm_weight
        FROM <target>
      ) AS s
      LEFT SEMI JOIN _ivm_k AS k ON s.`c9` <=> k.`c0`
    ) AS h
    UNION ALL
    SELECT * FROM _ivm_d
  )
  SELECT `c9`, `c10`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
  FROM (
    SELECT `c9`, `c10`, _ivm_weight FROM (
      SELECT c6 AS c9, c7 AS c10, _ivm_weight
      FROM (
        SELECT *
        FROM (
          SELECT c3 AS c6, c4 AS c7, c5 AS c8, _ivm_weight
          FROM (
            SELECT c0 AS c3, c1 AS c4, c2 AS c5, _ivm_weight
            FROM (
              SELECT `c0`, `c1`, ROW_NUMBER() OVER (PARTITION BY c0 ORDER BY c1 DESC) AS `c2`, CAST(1 AS BIGINT) AS _ivm_weight
              FROM (
                SELECT `c0`, `c1`, CASE WHEN CAST(sum(_ivm_weight) AS BIGINT) < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a row would become negative)') AS BIGINT) ELSE CAST(sum(_ivm_weight) AS BIGINT) END AS _ivm_weight
                FROM (
                  SELECT `c0` AS c0, `c1` AS c1, _ivm_weight
                  FROM _ivm_n
                ) AS _ivm_z
                GROUP BY `c0`, `c1`
                HAVING sum(_ivm_weight) <> 0
              ) AS _ivm_b
              LATERAL VIEW explode(sequence(1, _ivm_weight)) _ivm_a AS _ivm_copy
            ) AS t2
          ) AS t3
        ) AS t4
        WHERE (c8 = 1)
      ) AS t5
    ) AS _ivm_term0
    UNION ALL
    SELECT `c9`, `c10`, -_ivm_weight AS _ivm_weight FROM (
      SELECT /*+ BROADCAST(k) */ s.* FROM (
        SELECT `a` AS c9, `b` AS c10, CAST(1 AS BIGINT) AS _ivm_weight
        FROM <target>
      ) AS s
      LEFT SEMI JOIN _ivm_k AS k ON s.`c9` <=> k.`c0`
    ) AS _ivm_term1
  ) AS _ivm_z
  GROUP BY `c9`, `c10`
  HAVING sum(_ivm_weight) <> 0
) AS _ivm_out;

-- case: the key only (b dropped): no whole rows held, the input is read even when the change only inserts
-- model: SELECT q.a FROM (SELECT r.a, r.b, row_number() OVER (PARTITION BY r.a ORDER BY r.b DESC) AS rn FROM db.r AS r) AS q WHERE q.rn = 1
-- changed: db.r
-- inserting: db.r
SELECT c9 AS `a`, _ivm_weight
FROM (
  WITH _ivm_d AS (
    SELECT c0 AS c0, c1 AS c1, _ivm_weight
    FROM (
      SELECT `a` AS c0, `b` AS c1, _ivm_weight
      FROM <db.r@delta>
    ) AS t1
  ),
  _ivm_k AS (
    SELECT DISTINCT `c0` FROM _ivm_d
  ),
  _ivm_n AS (
    SELECT /*+ BROADCAST(k) */ s.* FROM (
      SELECT c0 AS c0, c1 AS c1, _ivm_weight
      FROM (
        SELECT `a` AS c0, `b` AS c1, _ivm_weight
        FROM <db.r@new>
      ) AS t2
    ) AS s
    LEFT SEMI JOIN _ivm_k AS k ON s.`c0` <=> k.`c0`
  )
  SELECT `c9`, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
  FROM (
    SELECT `c9`, _ivm_weight FROM (
      SELECT c6 AS c9, _ivm_weight
      FROM (
        SELECT *
        FROM (
          SELECT c3 AS c6, c5 AS c8, _ivm_weight
          FROM (
            SELECT c0 AS c3, c1 AS c4, c2 AS c5, _ivm_weight
            FROM (
              SELECT `c0`, `c1`, ROW_NUMBER() OVER (PARTITION BY c0 ORDER BY c1 DESC) AS `c2`, CAST(1 AS BIGINT) AS _ivm_weight
              FROM (
                SELECT `c0`, `c1`, CASE WHEN CAST(sum(_ivm_weight) AS BIGINT) < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a row would become negative)') AS BIGINT) ELSE CAST(sum(_ivm_weight) AS BIGINT) END AS _ivm_weight
                FROM (
                  SELECT `c0` AS c0, `c1` AS c1, _ivm_weight
                  FROM _ivm_n
                ) AS _ivm_z
                GROUP BY `c0`, `c1`
                HAVING sum(_ivm_weight) <> 0
              ) AS _ivm_b
              LATERAL VIEW explode(sequence(1, _ivm_weight)) _ivm_a AS _ivm_copy
            ) AS t3
          ) AS t4
        ) AS t5
        WHERE (c8 = 1)
      ) AS t6
    ) AS _ivm_term0
    UNION ALL
    SELECT `c9`, -_ivm_weight AS _ivm_weight FROM (
      SELECT /*+ BROADCAST(k) */ s.* FROM (
        SELECT `a` AS c9, CAST(1 AS BIGINT) AS _ivm_weight
        FROM <target>
      ) AS s
      LEFT SEMI JOIN _ivm_k AS k ON s.`c9` <=> k.`c0`
    ) AS _ivm_term1
  ) AS _ivm_z
  GROUP BY `c9`
  HAVING sum(_ivm_weight) <> 0
) AS _ivm_out;
