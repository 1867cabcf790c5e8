-- Rule: filter (ivm_core/rules/filter.py)
--
--   Δ σ_p(R) = σ_p(ΔR)
-- Cases: a model, the inputs that changed, the SQL of the model's change (see
-- tests/unit/test_golden_rules.py; regenerate with UPDATE_GOLDEN=1 pytest tests/unit/test_golden_rules.py).

-- case: a predicate is applied to the change
-- model: SELECT r.a FROM db.r AS r WHERE r.b > 1
-- changed: db.r
SELECT c2 AS `a`, _ivm_weight
FROM (
  SELECT c0 AS c2, _ivm_weight
  FROM (
    SELECT *
    FROM (
      SELECT `a` AS c0, `b` AS c1, _ivm_weight
      FROM <db.r@delta>
    ) AS t1
    WHERE (c1 > 1)
  ) AS t2
) AS _ivm_out;

-- case: NULL-aware predicates keep their three-valued meaning
-- model: SELECT r.a FROM db.r AS r WHERE (r.a = 1 OR r.a IS NULL) AND coalesce(r.b, 0) <> 2
-- changed: db.r
SELECT c2 AS `a`, _ivm_weight
FROM (
  SELECT c0 AS c2, _ivm_weight
  FROM (
    SELECT *
    FROM (
      SELECT *
      FROM (
        SELECT `a` AS c0, `b` AS c1, _ivm_weight
        FROM <db.r@delta>
      ) AS t1
      WHERE (c0 = 1 OR c0 IS NULL)
    ) AS t2
    WHERE (COALESCE(c1, 0) <> 2)
  ) AS t3
) AS _ivm_out;
