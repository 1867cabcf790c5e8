-- Rule: union_all (ivm_core/rules/union_all.py)
--
--   Δ(R₁ ⊎ … ⊎ Rₙ) = ΔR₁ ⊎ … ⊎ ΔRₙ, branches without a change dropped
-- Cases: a model, the inputs that changed, the SQL of the model's change (see
-- tests/unit/test_golden_rules.py; regenerate with UPDATE_GOLDEN=1 pytest tests/unit/test_golden_rules.py).

-- case: both branches changed
-- model: SELECT r.a AS k FROM db.r AS r UNION ALL SELECT s.c FROM db.s AS s
-- changed: db.r, db.s
SELECT c6 AS `k`, _ivm_weight
FROM (
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
) AS _ivm_out;

-- case: one branch changed: the other is dropped
-- model: SELECT r.a AS k FROM db.r AS r UNION ALL SELECT s.c FROM db.s AS s
-- changed: db.s
SELECT c6 AS `k`, _ivm_weight
FROM (
  SELECT c5 AS c6, _ivm_weight
  FROM (
    SELECT c4 AS c5, _ivm_weight
    FROM (
      SELECT `c` AS c4, _ivm_weight
      FROM <db.s@delta>
    ) AS t1
  ) AS t2
) AS _ivm_out;
