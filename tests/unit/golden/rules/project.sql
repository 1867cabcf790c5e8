-- Rule: project (ivm_core/rules/project.py)
--
--   Δ π_f(R) = π_f(ΔR): every row keeps its weight
-- Cases: a model, the inputs that changed, the SQL of the model's change (see
-- tests/unit/test_golden_rules.py; regenerate with UPDATE_GOLDEN=1 pytest tests/unit/test_golden_rules.py).

-- case: expressions are computed over the change
-- model: SELECT r.a + 1 AS x, CASE WHEN r.b > 1 THEN r.a ELSE r.b END AS y FROM db.r AS r
-- changed: db.r
SELECT c2 AS `x`, c3 AS `y`, _ivm_weight
FROM (
  SELECT c0 + 1 AS c2, CASE WHEN c1 > 1 THEN c0 ELSE c1 END AS c3, _ivm_weight
  FROM (
    SELECT `a` AS c0, `b` AS c1, _ivm_weight
    FROM <db.r@delta>
  ) AS t1
) AS _ivm_out;

-- case: a constant column
-- model: SELECT r.a, 'r' AS kind FROM db.r AS r
-- changed: db.r
SELECT c2 AS `a`, c3 AS `kind`, _ivm_weight
FROM (
  SELECT c0 AS c2, 'r' AS c3, _ivm_weight
  FROM (
    SELECT `a` AS c0, _ivm_weight
    FROM <db.r@delta>
  ) AS t1
) AS _ivm_out;
