-- Rule: join (ivm_core/rules/join.py)
--
--   Δ(R₁ ⋈ … ⋈ Rₙ) = Σₖ R₁ⁿᵉʷ ⋈ … ⋈ Rₖ₋₁ⁿᵉʷ ⋈ ΔRₖ ⋈ Rₖ₊₁ᵒˡᵈ ⋈ … ⋈ Rₙᵒˡᵈ
--   one update path per changed input, joining from its change along the join conditions;
--   with inputs U unchanged (each joined to at most one changed input), Δ(C ⋈ U) = Δ(C) ⋈ U:
--   U is joined once, after the paths of the rest are summed
-- Cases: a model, the inputs that changed, the SQL of the model's change (see
-- tests/unit/test_golden_rules.py; regenerate with UPDATE_GOLDEN=1 pytest tests/unit/test_golden_rules.py).

-- case: two inputs, one changed: one update path reading the other's old value
-- model: SELECT r.a, s.c FROM db.r AS r JOIN db.s AS s ON r.b = s.b
-- changed: db.r
SELECT c4 AS `a`, c5 AS `c`, _ivm_weight
FROM (
  SELECT c0 AS c4, c3 AS c5, _ivm_weight
  FROM (
    SELECT /*+ BROADCAST(t1) */ t1.c0, t1.c1, t2.c2, t2.c3, t1._ivm_weight * t2._ivm_weight AS _ivm_weight
    FROM (
      SELECT `a` AS c0, `b` AS c1, _ivm_weight
      FROM <db.r@delta>
    ) AS t1
    JOIN (
      SELECT `b` AS c2, `c` AS c3, _ivm_weight
      FROM <db.s@old>
    ) AS t2
      ON (t1.c1 = t2.c2)
  ) AS t3
) AS _ivm_out;

-- case: two inputs, both changed: the second path reads the first input's new value
-- model: SELECT r.a, s.c FROM db.r AS r JOIN db.s AS s ON r.b = s.b
-- changed: db.r, db.s
SELECT c4 AS `a`, c5 AS `c`, _ivm_weight
FROM (
  SELECT c0 AS c4, c3 AS c5, _ivm_weight
  FROM (
    SELECT c0 AS c0, c1 AS c1, c2 AS c2, c3 AS c3, _ivm_weight
    FROM (
      SELECT /*+ BROADCAST(t1) */ t1.c0, t1.c1, t2.c2, t2.c3, t1._ivm_weight * t2._ivm_weight AS _ivm_weight
      FROM (
        SELECT `a` AS c0, `b` AS c1, _ivm_weight
        FROM <db.r@delta>
      ) AS t1
      JOIN (
        SELECT `b` AS c2, `c` AS c3, _ivm_weight
        FROM <db.s@old>
      ) AS t2
        ON (t1.c1 = t2.c2)
    ) AS t3
    UNION ALL
    SELECT c0 AS c0, c1 AS c1, c2 AS c2, c3 AS c3, _ivm_weight
    FROM (
      SELECT c0 AS c0, c1 AS c1, c2 AS c2, c3 AS c3, _ivm_weight
      FROM (
        SELECT /*+ BROADCAST(t4) */ t4.c2, t4.c3, t5.c0, t5.c1, t4._ivm_weight * t5._ivm_weight AS _ivm_weight
        FROM (
          SELECT `b` AS c2, `c` AS c3, _ivm_weight
          FROM <db.s@delta>
        ) AS t4
        JOIN (
          SELECT `a` AS c0, `b` AS c1, _ivm_weight
          FROM <db.r@new>
        ) AS t5
          ON (t5.c1 = t4.c2)
      ) AS t6
    ) AS t7
  ) AS t8
) AS _ivm_out;

-- case: a chain of three, the middle one changed: its path joins both neighbours
-- model: SELECT r.a, t.d FROM db.r AS r JOIN db.s AS s ON r.b = s.b JOIN db.t AS t ON s.c = t.c
-- changed: db.s
SELECT c6 AS `a`, c7 AS `d`, _ivm_weight
FROM (
  SELECT c0 AS c6, c5 AS c7, _ivm_weight
  FROM (
    SELECT c0 AS c0, c1 AS c1, c2 AS c2, c3 AS c3, c4 AS c4, c5 AS c5, _ivm_weight
    FROM (
      SELECT /*+ BROADCAST(t3) */ t3.c2, t3.c3, t3.c0, t3.c1, t4.c4, t4.c5, t3._ivm_weight * t4._ivm_weight AS _ivm_weight
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
      JOIN (
        SELECT `c` AS c4, `d` AS c5, _ivm_weight
        FROM <db.t@old>
      ) AS t4
        ON (t3.c3 = t4.c4)
    ) AS t5
  ) AS t6
) AS _ivm_out;

-- case: a non-equi condition is applied with the step that has its columns
-- model: SELECT r.a, s.c FROM db.r AS r JOIN db.s AS s ON r.b = s.b AND r.a < s.c
-- changed: db.s
SELECT c4 AS `a`, c5 AS `c`, _ivm_weight
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
        ON (t2.c1 = t1.c2) AND (t2.c0 < t1.c3)
    ) AS t3
  ) AS t4
) AS _ivm_out;

-- case: a self-join: two paths over the same input
-- model: SELECT x.a AS a1, y.a AS a2 FROM db.r AS x JOIN db.r AS y ON x.b = y.b
-- changed: db.r
SELECT c4 AS `a1`, c5 AS `a2`, _ivm_weight
FROM (
  SELECT c0 AS c4, c2 AS c5, _ivm_weight
  FROM (
    SELECT c0 AS c0, c1 AS c1, c2 AS c2, c3 AS c3, _ivm_weight
    FROM (
      SELECT /*+ BROADCAST(t1) */ t1.c0, t1.c1, t2.c2, t2.c3, t1._ivm_weight * t2._ivm_weight AS _ivm_weight
      FROM (
        SELECT `a` AS c0, `b` AS c1, _ivm_weight
        FROM <db.r@delta>
      ) AS t1
      JOIN (
        SELECT `a` AS c2, `b` AS c3, _ivm_weight
        FROM <db.r@old>
      ) AS t2
        ON (t1.c1 = t2.c3)
    ) AS t3
    UNION ALL
    SELECT c0 AS c0, c1 AS c1, c2 AS c2, c3 AS c3, _ivm_weight
    FROM (
      SELECT c0 AS c0, c1 AS c1, c2 AS c2, c3 AS c3, _ivm_weight
      FROM (
        SELECT /*+ BROADCAST(t4) */ t4.c2, t4.c3, t5.c0, t5.c1, t4._ivm_weight * t5._ivm_weight AS _ivm_weight
        FROM (
          SELECT `a` AS c2, `b` AS c3, _ivm_weight
          FROM <db.r@delta>
        ) AS t4
        JOIN (
          SELECT `a` AS c0, `b` AS c1, _ivm_weight
          FROM <db.r@new>
        ) AS t5
          ON (t5.c1 = t4.c3)
      ) AS t6
    ) AS t7
  ) AS t8
) AS _ivm_out;

-- case: a chain of three, two changed: the unchanged one is joined once, after both paths
-- model: SELECT r.a, t.d FROM db.r AS r JOIN db.s AS s ON r.b = s.b JOIN db.t AS t ON s.c = t.c
-- changed: db.s, db.t
SELECT c6 AS `a`, c7 AS `d`, _ivm_weight
FROM (
  SELECT c0 AS c6, c5 AS c7, _ivm_weight
  FROM (
    SELECT c0 AS c0, c1 AS c1, c2 AS c2, c3 AS c3, c4 AS c4, c5 AS c5, _ivm_weight
    FROM (
      SELECT /*+ BROADCAST(t8) */ t8.c2, t8.c3, t8.c4, t8.c5, t9.c0, t9.c1, t8._ivm_weight * t9._ivm_weight AS _ivm_weight
      FROM (
        SELECT c2 AS c2, c3 AS c3, c4 AS c4, c5 AS c5, _ivm_weight
        FROM (
          SELECT /*+ BROADCAST(t1) */ t1.c2, t1.c3, t2.c4, t2.c5, t1._ivm_weight * t2._ivm_weight AS _ivm_weight
          FROM (
            SELECT `b` AS c2, `c` AS c3, _ivm_weight
            FROM <db.s@delta>
          ) AS t1
          JOIN (
            SELECT `c` AS c4, `d` AS c5, _ivm_weight
            FROM <db.t@old>
          ) AS t2
            ON (t1.c3 = t2.c4)
        ) AS t3
        UNION ALL
        SELECT c2 AS c2, c3 AS c3, c4 AS c4, c5 AS c5, _ivm_weight
        FROM (
          SELECT c2 AS c2, c3 AS c3, c4 AS c4, c5 AS c5, _ivm_weight
          FROM (
            SELECT /*+ BROADCAST(t4) */ t4.c4, t4.c5, t5.c2, t5.c3, t4._ivm_weight * t5._ivm_weight AS _ivm_weight
            FROM (
              SELECT `c` AS c4, `d` AS c5, _ivm_weight
              FROM <db.t@delta>
            ) AS t4
            JOIN (
              SELECT `b` AS c2, `c` AS c3, _ivm_weight
              FROM <db.s@new>
            ) AS t5
              ON (t5.c3 = t4.c4)
          ) AS t6
        ) AS t7
      ) AS t8
      JOIN (
        SELECT `a` AS c0, `b` AS c1, _ivm_weight
        FROM <db.r@old>
      ) AS t9
        ON (t9.c1 = t8.c2)
    ) AS t10
  ) AS t11
) AS _ivm_out;

-- case: an unchanged input joined to both changed ones is not pulled out: each path joins it, as before
-- model: SELECT r.a, t.d FROM db.r AS r JOIN db.s AS s ON r.b = s.b JOIN db.t AS t ON s.c = t.c AND r.a = t.d
-- changed: db.r, db.t
SELECT c6 AS `a`, c7 AS `d`, _ivm_weight
FROM (
  SELECT c0 AS c6, c5 AS c7, _ivm_weight
  FROM (
    SELECT c0 AS c0, c1 AS c1, c2 AS c2, c3 AS c3, c4 AS c4, c5 AS c5, _ivm_weight
    FROM (
      SELECT /*+ BROADCAST(t3) */ t3.c0, t3.c1, t3.c2, t3.c3, t4.c4, t4.c5, t3._ivm_weight * t4._ivm_weight AS _ivm_weight
      FROM (
        SELECT /*+ BROADCAST(t1) */ t1.c0, t1.c1, t2.c2, t2.c3, t1._ivm_weight * t2._ivm_weight AS _ivm_weight
        FROM (
          SELECT `a` AS c0, `b` AS c1, _ivm_weight
          FROM <db.r@delta>
        ) AS t1
        JOIN (
          SELECT `b` AS c2, `c` AS c3, _ivm_weight
          FROM <db.s@old>
        ) AS t2
          ON (t1.c1 = t2.c2)
      ) AS t3
      JOIN (
        SELECT `c` AS c4, `d` AS c5, _ivm_weight
        FROM <db.t@old>
      ) AS t4
        ON (t3.c3 = t4.c4) AND (t3.c0 = t4.c5)
    ) AS t5
    UNION ALL
    SELECT c0 AS c0, c1 AS c1, c2 AS c2, c3 AS c3, c4 AS c4, c5 AS c5, _ivm_weight
    FROM (
      SELECT c0 AS c0, c1 AS c1, c2 AS c2, c3 AS c3, c4 AS c4, c5 AS c5, _ivm_weight
      FROM (
        SELECT /*+ BROADCAST(t8) */ t8.c4, t8.c5, t8.c0, t8.c1, t9.c2, t9.c3, t8._ivm_weight * t9._ivm_weight AS _ivm_weight
        FROM (
          SELECT /*+ BROADCAST(t6) */ t6.c4, t6.c5, t7.c0, t7.c1, t6._ivm_weight * t7._ivm_weight AS _ivm_weight
          FROM (
            SELECT `c` AS c4, `d` AS c5, _ivm_weight
            FROM <db.t@delta>
          ) AS t6
          JOIN (
            SELECT `a` AS c0, `b` AS c1, _ivm_weight
            FROM <db.r@new>
          ) AS t7
            ON (t7.c0 = t6.c5)
        ) AS t8
        JOIN (
          SELECT `b` AS c2, `c` AS c3, _ivm_weight
          FROM <db.s@new>
        ) AS t9
          ON (t8.c1 = t9.c2) AND (t9.c3 = t8.c4)
      ) AS t10
    ) AS t11
  ) AS t12
) AS _ivm_out;
