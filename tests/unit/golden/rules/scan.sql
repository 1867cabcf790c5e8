-- Rule: scan (ivm_core/rules/scan.py)
--
--   Δ scan(x) = Δx when x changed in this run, else 0
-- Cases: a model, the inputs that changed, the SQL of the model's change (see
-- tests/unit/test_golden_rules.py; regenerate with UPDATE_GOLDEN=1 pytest tests/unit/test_golden_rules.py).

-- case: a changed input is read from its change
-- model: SELECT r.a, r.b FROM db.r AS r
-- changed: db.r
SELECT c2 AS `a`, c3 AS `b`, _ivm_weight
FROM (
  SELECT c0 AS c2, c1 AS c3, _ivm_weight
  FROM (
    SELECT `a` AS c0, `b` AS c1, _ivm_weight
    FROM <db.r@delta>
  ) AS t1
) AS _ivm_out;

-- case: an unchanged input has no change
-- model: SELECT r.a, r.b FROM db.r AS r
-- changed: db.s
-- (no change reaches the output)

-- case: only the columns the model uses are read
-- model: SELECT r.b FROM db.r AS r
-- changed: db.r
SELECT c2 AS `b`, _ivm_weight
FROM (
  SELECT c1 AS c2, _ivm_weight
  FROM (
    SELECT `b` AS c1, _ivm_weight
    FROM <db.r@delta>
  ) AS t1
) AS _ivm_out;
