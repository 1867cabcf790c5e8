SELECT `id`, `weird ``name```, CAST(SUM(_ivm_weight) AS BIGINT) AS _ivm_weight
FROM `s`.`t_changes`
WHERE _ivm_seq > 3 AND _ivm_seq <= 7
GROUP BY `id`, `weird ``name```
HAVING SUM(_ivm_weight) <> 0
;
SELECT `id`, `weird ``name```, CAST(SUM(_ivm_weight) AS BIGINT) AS _ivm_weight
FROM `s`.`t_changes`
WHERE _ivm_seq > 3 AND _ivm_seq <= 7 AND <bounds>
GROUP BY `id`, `weird ``name```
HAVING SUM(_ivm_weight) <> 0
;
SELECT `id`, `weird ``name```, CAST(_ivm_weight AS BIGINT) AS _ivm_weight
FROM `s`.`t_changes`
WHERE _ivm_seq > 3 AND _ivm_seq <= 7
;
SELECT 'k0' AS probe, CAST(NULL AS BIGINT) AS bad, CAST(NULL AS BIGINT) AS total, CAST(NULL AS BIGINT) AS deletes, CAST(_ivm_p0_lo AS STRING) AS lo, CAST(_ivm_p0_hi AS STRING) AS hi, CAST(CASE WHEN size(_ivm_p0_keys) <= 100000 THEN transform(_ivm_p0_keys, v -> CAST(v AS STRING)) END AS ARRAY<STRING>) AS keys
FROM (
  SELECT min(`weird ``name```) AS _ivm_p0_lo, max(`weird ``name```) AS _ivm_p0_hi, array_sort(collect_set(`weird ``name```)) AS _ivm_p0_keys
  FROM `s`.`t_changes`
  WHERE _ivm_seq > 3 AND _ivm_seq <= 7
) AS _ivm_probe
;
SELECT 'k0_span' AS probe, CAST(NULL AS BIGINT) AS bad, CAST(NULL AS BIGINT) AS total, CAST(NULL AS BIGINT) AS deletes, CAST(_ivm_p0_lo AS STRING) AS lo, CAST(_ivm_p0_hi AS STRING) AS hi, CAST(NULL AS ARRAY<STRING>) AS keys
FROM (
  SELECT min(readable_metrics.`weird ``name```.lower_bound) AS _ivm_p0_lo, max(readable_metrics.`weird ``name```.upper_bound) AS _ivm_p0_hi
  FROM `s_ivm`.`m__index__s__t`.data_files
) AS _ivm_probe
;
(`id` IS NULL OR `id` BETWEEN 5 AND 9 OR `id` = 12)
;
(`weird ``name``` IS NULL OR `weird ``name``` BETWEEN DATE'2024-01-31' AND DATE'2024-02-03')
;
CREATE OR REPLACE TABLE `s_ivm`.`m__index__s__t`
USING iceberg
TBLPROPERTIES ('write.parquet.row-group-size-bytes' = '1048576', 'read.split.open-file-cost' = '65536', 'write.parquet.compression-codec' = 'snappy', 'write.metadata.delete-after-commit.enabled' = 'true', 'write.metadata.previous-versions-max' = '10')
AS
SELECT * FROM (
  <zset>
) AS _ivm_index
ORDER BY `id`
;
INSERT INTO `s_ivm`.`m__index__s__t` (`id`, `weird ``name```, `_ivm_weight`)
<delta>
;
INSERT INTO `s_ivm`.`m__index__s__t` (`id`, `weird ``name```, `_ivm_weight`)
SELECT /*+ BROADCAST(h) */ d.`id`, d.`weird ``name```, d.`_ivm_weight`
FROM (
  <delta>
) AS d
LEFT JOIN (
  SELECT /*+ BROADCAST(k) */ s.`id`, s.`weird ``name```, sum(s._ivm_weight) AS _ivm_weight
  FROM <index within bounds> AS s
  LEFT SEMI JOIN (SELECT * FROM (
    <delta>
  ) AS _ivm_d WHERE _ivm_weight < 0) AS k ON s.`id` <=> k.`id` AND s.`weird ``name``` <=> k.`weird ``name```
  GROUP BY s.`id`, s.`weird ``name```
) AS h ON d.`id` <=> h.`id` AND d.`weird ``name``` <=> h.`weird ``name```
WHERE CASE WHEN d._ivm_weight < 0 AND coalesce(h._ivm_weight, 0) + d._ivm_weight < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a row of the input would become negative)') AS BOOLEAN) ELSE TRUE END
;
INSERT OVERWRITE `s_ivm`.`m__index__s__t`
SELECT * FROM (
  SELECT `id`, `weird ``name```, CASE WHEN CAST(sum(_ivm_weight) AS BIGINT) < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a row of the input would become negative)') AS BIGINT) ELSE CAST(sum(_ivm_weight) AS BIGINT) END AS _ivm_weight
  FROM (
    SELECT `id`, `weird ``name```, `_ivm_weight` FROM `s_ivm`.`m__index__s__t`
    UNION ALL
    SELECT `id`, `weird ``name```, `_ivm_weight` FROM (
      <delta>
    ) AS _ivm_delta
  ) AS _ivm_z
  GROUP BY `id`, `weird ``name```
  HAVING sum(_ivm_weight) <> 0
) AS _ivm_index
ORDER BY `id`
;
SELECT CAST(count(*) AS BIGINT) AS bad FROM (
  <delta>
) AS d
LEFT JOIN (
  SELECT /*+ BROADCAST(k) */ s.`id`, s.`weird ``name```, sum(s._ivm_weight) AS _ivm_weight
  FROM `s_ivm`.`m__index__s__t` AS s
  LEFT SEMI JOIN (SELECT * FROM (
    <delta>
  ) AS _ivm_d WHERE _ivm_weight < 0) AS k ON s.`id` <=> k.`id` AND s.`weird ``name``` <=> k.`weird ``name```
  GROUP BY s.`id`, s.`weird ``name```
) AS h ON d.`id` <=> h.`id` AND d.`weird ``name``` <=> h.`weird ``name```
WHERE d._ivm_weight < 0 AND coalesce(h._ivm_weight, 0) + d._ivm_weight < 0
;
SELECT 'w0' AS probe, CAST(_ivm_p0_bad AS BIGINT) AS bad, CAST(_ivm_p0_total AS BIGINT) AS total, CAST(_ivm_p0_deletes AS BIGINT) AS deletes, CAST(NULL AS STRING) AS lo, CAST(NULL AS STRING) AS hi, CAST(NULL AS ARRAY<STRING>) AS keys
FROM (
  SELECT count_if(_ivm_weight IS NULL OR _ivm_weight = 0) AS _ivm_p0_bad, count(*) AS _ivm_p0_total, count_if(_ivm_weight < 0) AS _ivm_p0_deletes
  FROM `s`.`t_changes`
  WHERE _ivm_seq > 3 AND _ivm_seq <= 7
) AS _ivm_probe
;
SELECT inline(array(named_struct('probe', 'w0', 'bad', CAST(_ivm_p0_bad AS BIGINT), 'total', CAST(_ivm_p0_total AS BIGINT), 'deletes', CAST(_ivm_p0_deletes AS BIGINT), 'lo', CAST(NULL AS STRING), 'hi', CAST(NULL AS STRING), 'keys', CAST(NULL AS ARRAY<STRING>)), named_struct('probe', 'k0', 'bad', CAST(NULL AS BIGINT), 'total', CAST(NULL AS BIGINT), 'deletes', CAST(NULL AS BIGINT), 'lo', CAST(_ivm_p1_lo AS STRING), 'hi', CAST(_ivm_p1_hi AS STRING), 'keys', CAST(CASE WHEN size(_ivm_p1_keys) <= 100000 THEN transform(_ivm_p1_keys, v -> CAST(v AS STRING)) END AS ARRAY<STRING>))))
FROM (
  SELECT count_if(_ivm_weight IS NULL OR _ivm_weight = 0) AS _ivm_p0_bad, count(*) AS _ivm_p0_total, count_if(_ivm_weight < 0) AS _ivm_p0_deletes, min(`id`) AS _ivm_p1_lo, max(`id`) AS _ivm_p1_hi, array_sort(collect_set(`id`)) AS _ivm_p1_keys
  FROM `s`.`t_changes`
  WHERE _ivm_seq > 3 AND _ivm_seq <= 7
) AS _ivm_probe
UNION ALL
SELECT 'k0_span' AS probe, CAST(NULL AS BIGINT) AS bad, CAST(NULL AS BIGINT) AS total, CAST(NULL AS BIGINT) AS deletes, CAST(_ivm_p0_lo AS STRING) AS lo, CAST(_ivm_p0_hi AS STRING) AS hi, CAST(NULL AS ARRAY<STRING>) AS keys
FROM (
  SELECT min(readable_metrics.`id`.lower_bound) AS _ivm_p0_lo, max(readable_metrics.`id`.upper_bound) AS _ivm_p0_hi
  FROM `s_ivm`.`m__index__s__t`.data_files
) AS _ivm_probe
UNION ALL
SELECT 'n0' AS probe, CAST(bad AS BIGINT) AS bad, CAST(NULL AS BIGINT) AS total, CAST(NULL AS BIGINT) AS deletes, CAST(NULL AS STRING) AS lo, CAST(NULL AS STRING) AS hi, CAST(NULL AS ARRAY<STRING>) AS keys
FROM (
  SELECT CAST(count(*) AS BIGINT) AS bad FROM (
    <window>
  ) AS d WHERE d._ivm_weight < 0
) AS _ivm_check
;
SELECT 'n0' AS probe, CAST(bad AS BIGINT) AS bad, CAST(NULL AS BIGINT) AS total, CAST(NULL AS BIGINT) AS deletes, CAST(NULL AS STRING) AS lo, CAST(NULL AS STRING) AS hi, CAST(NULL AS ARRAY<STRING>) AS keys
FROM (
  SELECT CAST(count(*) AS BIGINT) AS bad FROM (
    <history>
  ) AS d WHERE d._ivm_weight < 0
) AS _ivm_check
;
SELECT 'n0' AS probe, CAST(bad AS BIGINT) AS bad, CAST(NULL AS BIGINT) AS total, CAST(NULL AS BIGINT) AS deletes, CAST(NULL AS STRING) AS lo, CAST(NULL AS STRING) AS hi, CAST(NULL AS ARRAY<STRING>) AS keys
FROM (
  SELECT CAST(count(*) AS BIGINT) AS bad FROM (
    <window>
  ) AS d
  LEFT JOIN (
    SELECT /*+ BROADCAST(k) */ s.`id`, s.`weird ``name```, sum(s._ivm_weight) AS _ivm_weight
    FROM (<base rows>) AS s
    LEFT SEMI JOIN (SELECT * FROM (
      <window>
    ) AS _ivm_d WHERE _ivm_weight < 0) AS k ON s.`id` <=> k.`id` AND s.`weird ``name``` <=> k.`weird ``name```
    GROUP BY s.`id`, s.`weird ``name```
  ) AS h ON d.`id` <=> h.`id` AND d.`weird ``name``` <=> h.`weird ``name```
  WHERE d._ivm_weight < 0 AND coalesce(h._ivm_weight, 0) + d._ivm_weight < 0
) AS _ivm_check
;
SELECT `id`, `weird ``name``` FROM `s`.`t` VERSION AS OF 42
;
SELECT /*+ BROADCAST(w) */ p.* FROM (
  SELECT `id`, `weird ``name```, CAST(1 AS BIGINT) AS _ivm_weight FROM `s`.`t` VERSION AS OF 42
) AS p
LEFT ANTI JOIN (
  <window>
) AS w ON p.`id` <=> w.`id` AND p.`weird ``name``` <=> w.`weird ``name```
UNION ALL
SELECT `id`, `weird ``name```, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
FROM (
  SELECT /*+ BROADCAST(w) */ p.* FROM (
    SELECT `id`, `weird ``name```, CAST(1 AS BIGINT) AS _ivm_weight FROM `s`.`t` VERSION AS OF 42
  ) AS p
  LEFT SEMI JOIN (
    <window>
  ) AS w ON p.`id` <=> w.`id` AND p.`weird ``name``` <=> w.`weird ``name```
  UNION ALL
  <window>
) AS _ivm_touched
GROUP BY `id`, `weird ``name```
HAVING sum(_ivm_weight) <> 0
;
SELECT /*+ BROADCAST(w) */ p.* FROM (
  <pieces>
) AS p
LEFT ANTI JOIN (
  <window>
) AS w ON TRUE
UNION ALL
SELECT CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
FROM (
  SELECT /*+ BROADCAST(w) */ p.* FROM (
    <pieces>
  ) AS p
  LEFT SEMI JOIN (
    <window>
  ) AS w ON TRUE
  UNION ALL
  <window>
) AS _ivm_touched
HAVING sum(_ivm_weight) <> 0
;
INSERT INTO `s_ivm`.`m__changes`
SELECT `id`, `weird ``name```, CAST(SUM(_ivm_weight) AS BIGINT) AS _ivm_weight, CAST(8 AS BIGINT) AS _ivm_seq
FROM (
  <delta>
) AS _ivm_delta
GROUP BY `id`, `weird ``name```
HAVING SUM(_ivm_weight) <> 0
;
CACHE TABLE `_ivm_x_change` AS
SELECT `id`, `weird ``name```, CAST(SUM(_ivm_weight) AS BIGINT) AS _ivm_weight, CAST(8 AS BIGINT) AS _ivm_seq
FROM (
  <delta>
) AS _ivm_delta
GROUP BY `id`, `weird ``name```
HAVING SUM(_ivm_weight) <> 0
;
SELECT c.`id`, c.`weird ``name```, c._ivm_weight, CASE WHEN c._ivm_weight < 0 THEN coalesce(p._ivm_old, 0) ELSE 0 END AS _ivm_old
FROM (SELECT `id`, `weird ``name```, _ivm_weight FROM `s_ivm`.`m__changes` WHERE _ivm_seq = 8) AS c
LEFT JOIN (
  SELECT /*+ BROADCAST(n) */ n.`id`, n.`weird ``name```, count(*) AS _ivm_old
  FROM (SELECT `id`, `weird ``name```, _ivm_weight FROM `s_ivm`.`m__changes` WHERE _ivm_seq = 8 AND _ivm_weight < 0) AS n
  JOIN `s`.`m` AS t ON n.`id` <=> t.`id` AND n.`weird ``name``` <=> t.`weird ``name```
  GROUP BY n.`id`, n.`weird ``name```
) AS p ON c.`id` <=> p.`id` AND c.`weird ``name``` <=> p.`weird ``name```
;
SELECT c.`id`, c.`weird ``name```, c._ivm_weight, CASE WHEN c._ivm_weight < 0 THEN coalesce(p._ivm_old, 0) ELSE 0 END AS _ivm_old
FROM (SELECT `id`, `weird ``name```, _ivm_weight FROM `s_ivm`.`m__changes` WHERE _ivm_seq = 8) AS c
LEFT JOIN (
  SELECT /*+ BROADCAST(n) */ n.`id`, n.`weird ``name```, count(*) AS _ivm_old
  FROM (SELECT `id`, `weird ``name```, _ivm_weight FROM `s_ivm`.`m__changes` WHERE _ivm_seq = 8 AND _ivm_weight < 0) AS n
  JOIN (SELECT * FROM `s`.`m` WHERE <bounds>) AS t ON n.`id` <=> t.`id` AND n.`weird ``name``` <=> t.`weird ``name```
  GROUP BY n.`id`, n.`weird ``name```
) AS p ON c.`id` <=> p.`id` AND c.`weird ``name``` <=> p.`weird ``name```
;
DELETE FROM `s`.`m` AS t WHERE <bounds> AND EXISTS (
  SELECT 1 FROM `_ivm_staged` AS s WHERE s._ivm_weight < 0 AND s._ivm_old > 0 AND t.`id` <=> s.`id` AND t.`weird ``name``` <=> s.`weird ``name```
)
;
CREATE OR REPLACE TABLE `s`.`m`
USING iceberg
TBLPROPERTIES ('write.merge.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read', 'write.delete.mode' = 'merge-on-read', 'write.parquet.row-group-size-bytes' = '2097152', 'write.metadata.delete-after-commit.enabled' = 'true', 'write.metadata.previous-versions-max' = '10')
AS
SELECT * FROM (
  <select>
) AS _ivm_rows
SORT BY `id`
;
SELECT 't' AS probe, CAST(NULL AS BIGINT) AS bad, CAST(NULL AS BIGINT) AS total, CAST(NULL AS BIGINT) AS deletes, CAST(_ivm_p0_lo AS STRING) AS lo, CAST(_ivm_p0_hi AS STRING) AS hi, CAST(CASE WHEN size(_ivm_p0_keys) <= 100000 THEN transform(_ivm_p0_keys, v -> CAST(v AS STRING)) END AS ARRAY<STRING>) AS keys
FROM (
  SELECT min(CASE WHEN _ivm_weight < 0 THEN `id` END) AS _ivm_p0_lo, max(CASE WHEN _ivm_weight < 0 THEN `id` END) AS _ivm_p0_hi, array_sort(collect_set(CASE WHEN _ivm_weight < 0 THEN `id` END)) AS _ivm_p0_keys
  FROM `s_ivm`.`m__changes`
  WHERE _ivm_seq > 7 AND _ivm_seq <= 8
) AS _ivm_probe
;
SELECT CAST(count_if(_ivm_old + _ivm_weight < 0) AS BIGINT), CAST(count_if(_ivm_weight < 0 AND _ivm_old > 0) AS BIGINT), CAST(count_if(_ivm_weight > 0 OR _ivm_old + _ivm_weight > 0) AS BIGINT), CAST(count_if(_ivm_weight < 0 AND _ivm_old + _ivm_weight > 0) AS BIGINT), CAST(coalesce(sum(CASE WHEN _ivm_weight > 0 THEN _ivm_weight END), 0) AS BIGINT), CAST(coalesce(sum(CASE WHEN _ivm_weight < 0 THEN -_ivm_weight END), 0) AS BIGINT) FROM `_ivm_staged`
;
INSERT OVERWRITE `s`.`m` (`id`, `weird ``name```)
SELECT `id`, `weird ``name``` FROM (
  <result>
) AS _ivm_r
LATERAL VIEW explode(sequence(1, _ivm_weight)) _ivm_a AS _ivm_copy
WHERE _ivm_weight > 0
;
SELECT CAST(coalesce(sum(CASE WHEN _ivm_weight > 0 THEN _ivm_weight END), 0) AS BIGINT), CAST(coalesce(sum(CASE WHEN _ivm_weight < 0 THEN -_ivm_weight END), 0) AS BIGINT)
FROM (
  SELECT `id`, `weird ``name```, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
  FROM (
    SELECT `id`, `weird ``name```, CAST(1 AS BIGINT) AS _ivm_weight FROM `s`.`m`
    UNION ALL
    SELECT `id`, `weird ``name```, CAST(-1 AS BIGINT) AS _ivm_weight FROM `s`.`m` VERSION AS OF 42
  ) AS _ivm_z
  GROUP BY `id`, `weird ``name```
  HAVING sum(_ivm_weight) <> 0
) AS _ivm_net
;
DELETE FROM `s`.`m` AS t WHERE EXISTS (
  SELECT 1 FROM `_ivm_staged` AS s WHERE s._ivm_weight < 0 AND s._ivm_old > 0 AND t.`id` <=> s.`id` AND t.`weird ``name``` <=> s.`weird ``name```
)
;
INSERT INTO `s`.`m` (`id`, `weird ``name```)
SELECT `id`, `weird ``name``` FROM `_ivm_staged`
  LATERAL VIEW explode(sequence(1, CASE WHEN _ivm_weight > 0 THEN _ivm_weight ELSE _ivm_old + _ivm_weight END)) _ivm_a AS _ivm_copy
  WHERE _ivm_weight > 0 OR _ivm_old + _ivm_weight > 0
;
INSERT INTO `s`.`m` (`id`, `weird ``name```)
SELECT `id`, `weird ``name``` FROM `s_ivm`.`m__changes`
  LATERAL VIEW explode(sequence(1, _ivm_weight)) _ivm_a AS _ivm_copy
  WHERE _ivm_seq = 8 AND _ivm_weight > 0
;
SELECT inline(array(named_struct('probe', 'n', 'bad', CAST(NULL AS BIGINT), 'total', CAST(_ivm_p0_gained AS BIGINT), 'deletes', CAST(_ivm_p0_lost AS BIGINT), 'lo', CAST(NULL AS STRING), 'hi', CAST(NULL AS STRING), 'keys', CAST(NULL AS ARRAY<STRING>)), named_struct('probe', 'd', 'bad', CAST(NULL AS BIGINT), 'total', CAST(NULL AS BIGINT), 'deletes', CAST(_ivm_p1_rows AS BIGINT), 'lo', CAST(NULL AS STRING), 'hi', CAST(NULL AS STRING), 'keys', CAST(NULL AS ARRAY<STRING>))))
FROM (
  SELECT coalesce(sum(CASE WHEN _ivm_weight > 0 THEN _ivm_weight END), 0) AS _ivm_p0_gained, coalesce(sum(CASE WHEN _ivm_weight < 0 THEN -_ivm_weight END), 0) AS _ivm_p0_lost, count_if(_ivm_weight < 0) AS _ivm_p1_rows
  FROM `s_ivm`.`m__changes`
  WHERE _ivm_seq > 7 AND _ivm_seq <= 8
) AS _ivm_probe
;
MERGE INTO `s`.`m` AS t
USING (SELECT `id`, `weird ``name``` FROM `s_ivm`.`m__changes` WHERE _ivm_seq = 8 AND _ivm_weight < 0) AS c
ON t.`id` <=> c.`id` AND t.`weird ``name``` <=> c.`weird ``name``` AND <bounds over t>
WHEN MATCHED THEN DELETE
WHEN NOT MATCHED AND CAST(raise_error('the change deletes rows that are not there (the multiplicity of a row of the result would become negative)') AS BOOLEAN) THEN INSERT (`id`, `weird ``name```) VALUES (c.`id`, c.`weird ``name```)
;
INSERT INTO `s`.`m` (`id`, `weird ``name```)
SELECT `id`, `weird ``name``` FROM (
  SELECT `id`, `weird ``name```, _ivm_weight AS _ivm_n FROM (SELECT `id`, `weird ``name```, _ivm_weight FROM `s_ivm`.`m__changes` WHERE _ivm_seq = 8 AND _ivm_weight > 0) AS a
  UNION ALL
  SELECT /*+ BROADCAST(d) */ t.`id`, t.`weird ``name```, count(*) - 1 AS _ivm_n
  FROM (SELECT * FROM `s`.`m`.snapshot_id_42 WHERE <bounds>) AS t
  JOIN (SELECT `id`, `weird ``name```, _ivm_weight FROM `s_ivm`.`m__changes` WHERE _ivm_seq = 8 AND _ivm_weight < 0) AS d ON t.`id` <=> d.`id` AND t.`weird ``name``` <=> d.`weird ``name```
  GROUP BY t.`id`, t.`weird ``name```
) AS _ivm_r
LATERAL VIEW explode(sequence(1, _ivm_n)) _ivm_a AS _ivm_copy
WHERE _ivm_n > 0
;
SELECT CAST(coalesce(sum(CASE WHEN _ivm_weight > 0 THEN _ivm_weight END), 0) AS BIGINT), CAST(coalesce(sum(CASE WHEN _ivm_weight < 0 THEN -_ivm_weight END), 0) AS BIGINT)
FROM `s_ivm`.`m__changes` WHERE _ivm_seq = 8
;
SELECT inline(array(named_struct('probe', 'n', 'bad', CAST(NULL AS BIGINT), 'total', CAST(_ivm_p0_gained AS BIGINT), 'deletes', CAST(_ivm_p0_lost AS BIGINT), 'lo', CAST(NULL AS STRING), 'hi', CAST(NULL AS STRING), 'keys', CAST(NULL AS ARRAY<STRING>)), named_struct('probe', 't', 'bad', CAST(NULL AS BIGINT), 'total', CAST(NULL AS BIGINT), 'deletes', CAST(NULL AS BIGINT), 'lo', CAST(_ivm_p1_lo AS STRING), 'hi', CAST(_ivm_p1_hi AS STRING), 'keys', CAST(CASE WHEN size(_ivm_p1_keys) <= 100000 THEN transform(_ivm_p1_keys, v -> CAST(v AS STRING)) END AS ARRAY<STRING>))))
FROM (
  SELECT coalesce(sum(CASE WHEN _ivm_weight > 0 THEN _ivm_weight END), 0) AS _ivm_p0_gained, coalesce(sum(CASE WHEN _ivm_weight < 0 THEN -_ivm_weight END), 0) AS _ivm_p0_lost, min(CASE WHEN _ivm_weight < 0 THEN `id` END) AS _ivm_p1_lo, max(CASE WHEN _ivm_weight < 0 THEN `id` END) AS _ivm_p1_hi, array_sort(collect_set(CASE WHEN _ivm_weight < 0 THEN `id` END)) AS _ivm_p1_keys
  FROM `s_ivm`.`m__changes`
  WHERE _ivm_seq > 7 AND _ivm_seq <= 8
) AS _ivm_probe
;
MERGE INTO `s`.`m` AS t
USING (SELECT `id`, `weird ``name```, _ivm_weight FROM `s_ivm`.`m__changes` WHERE _ivm_seq = 8) AS c
ON t.`id` <=> c.`id` AND t.`weird ``name``` <=> c.`weird ``name``` AND (t.`id` IS NULL OR t.`id` BETWEEN 5 AND 9 OR t.`id` = 12)
WHEN MATCHED AND CASE WHEN c._ivm_weight = -1 THEN TRUE WHEN c._ivm_weight > 0 THEN CAST(raise_error('the change would leave a row twice in the result, which holds every row once') AS BOOLEAN) ELSE CAST(raise_error('the change deletes rows that are not there (the multiplicity of a row of the result would become negative)') AS BOOLEAN) END THEN DELETE
WHEN NOT MATCHED AND CASE WHEN c._ivm_weight = 1 THEN TRUE WHEN c._ivm_weight > 0 THEN CAST(raise_error('the change would leave a row twice in the result, which holds every row once') AS BOOLEAN) ELSE CAST(raise_error('the change deletes rows that are not there (the multiplicity of a row of the result would become negative)') AS BOOLEAN) END THEN INSERT (`id`, `weird ``name```) VALUES (c.`id`, c.`weird ``name```)
;
MERGE INTO `s`.`m` AS t
USING (SELECT /*+ BROADCAST(_ivm_c) */ * FROM (SELECT `id`, `weird ``name```, _ivm_weight FROM `s_ivm`.`m__changes` WHERE _ivm_seq = 8) AS _ivm_c) AS c
ON t.`id` <=> c.`id` AND t.`weird ``name``` <=> c.`weird ``name```
WHEN MATCHED AND CASE WHEN c._ivm_weight = -1 THEN TRUE WHEN c._ivm_weight > 0 THEN CAST(raise_error('the change would leave a row twice in the result, which holds every row once') AS BOOLEAN) ELSE CAST(raise_error('the change deletes rows that are not there (the multiplicity of a row of the result would become negative)') AS BOOLEAN) END THEN DELETE
;
INSERT INTO `s`.`m` (`id`, `weird ``name```)
SELECT `id`, `weird ``name``` FROM `s_ivm`.`m__changes`
WHERE _ivm_seq = 8 AND CASE WHEN (<live rows of `s`.`m`>) <> (<live rows of `s`.`m` at 42>) - 3 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a row of the result would become negative)') AS BOOLEAN)
  WHEN _ivm_weight = 1 THEN TRUE WHEN _ivm_weight > 0 THEN CAST(raise_error('the change would leave a row twice in the result, which holds every row once') AS BOOLEAN) WHEN _ivm_weight = -1 THEN FALSE ELSE CAST(raise_error('the change deletes rows that are not there (the multiplicity of a row of the result would become negative)') AS BOOLEAN) END
;
INSERT OVERWRITE `s`.`m` (`id`, `weird ``name```)
SELECT `id`, `weird ``name``` FROM (
  SELECT `id`, `weird ``name```, CASE WHEN CAST(sum(_ivm_weight) AS BIGINT) < 0 THEN CAST(raise_error('the change deletes rows that are not there (the multiplicity of a row of the result would become negative)') AS BIGINT) ELSE CAST(sum(_ivm_weight) AS BIGINT) END AS _ivm_weight
  FROM (
    SELECT `id`, `weird ``name```, CAST(1 AS BIGINT) AS _ivm_weight FROM `s`.`m` VERSION AS OF 42
    UNION ALL
    SELECT `id`, `weird ``name```, _ivm_weight FROM `s_ivm`.`m__changes` WHERE _ivm_seq = 8
  ) AS _ivm_z
  GROUP BY `id`, `weird ``name```
  HAVING sum(_ivm_weight) <> 0
) AS _ivm_net
LATERAL VIEW explode(sequence(1, _ivm_weight)) _ivm_a AS _ivm_copy
;
SELECT CAST(count(*) AS BIGINT) FROM (
  SELECT `id`, `weird ``name``` FROM (
    SELECT `id`, `weird ``name```, CAST(1 AS BIGINT) AS _ivm_weight FROM `s`.`m` VERSION AS OF 42
    UNION ALL
    SELECT `id`, `weird ``name```, _ivm_weight FROM `s_ivm`.`m__changes` WHERE _ivm_seq = 8
  ) AS _ivm_z
  GROUP BY `id`, `weird ``name```
  HAVING sum(_ivm_weight) < 0
) AS _ivm_bad
;
WITH t AS (SELECT `id`, `weird ``name```, count(*) AS _ivm_n FROM (SELECT `id`, `weird ``name``` FROM `s`.`m`) AS _ivm_target GROUP BY `id`, `weird ``name```),
f AS (SELECT `id`, `weird ``name```, count(*) AS _ivm_n FROM (
  SELECT `id`, `weird ``name``` FROM (
    <full>
  ) AS _ivm_recompute
) AS _ivm_full GROUP BY `id`, `weird ``name```)
SELECT coalesce(t.`id`, f.`id`) AS `id`, coalesce(t.`weird ``name```, f.`weird ``name```) AS `weird ``name```, coalesce(t._ivm_n, 0) AS target_count, coalesce(f._ivm_n, 0) AS full_refresh_count
FROM t FULL OUTER JOIN f ON t.`id` <=> f.`id` AND t.`weird ``name``` <=> f.`weird ``name```
WHERE NOT (t._ivm_n <=> f._ivm_n)
;
CALL spark_catalog.system.create_changelog_view(table => '`s`.`t`', options => map('start-snapshot-id', '41', 'end-snapshot-id', '42'), changelog_view => '_ivm_snapshot_change__m__s_t_0a1b2c3d__changelog')
;
SELECT `id`, `weird ``name```, _ivm_weight, CAST(1 AS BIGINT) AS _ivm_seq
FROM (
  SELECT `id`, `weird ``name```, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
  FROM (
    SELECT `id`, `weird ``name```, CAST(CASE WHEN _change_type IN ('DELETE', 'UPDATE_BEFORE') THEN -1 ELSE 1 END AS BIGINT) AS _ivm_weight FROM _ivm_snapshot_change__m__s_t_0a1b2c3d__changelog
  ) AS _ivm_z
  GROUP BY `id`, `weird ``name```
  HAVING sum(_ivm_weight) <> 0
) AS _ivm_c
;
SELECT `id`, `weird ``name```, _ivm_weight, CAST(1 AS BIGINT) AS _ivm_seq
FROM (
  SELECT `id`, `weird ``name```, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
  FROM (
    SELECT `id`, `weird ``name```, CAST(1 AS BIGINT) AS _ivm_weight FROM `s`.`t` VERSION AS OF 42
    UNION ALL
    SELECT `id`, `weird ``name```, CAST(-1 AS BIGINT) AS _ivm_weight FROM `s`.`t` VERSION AS OF 41
  ) AS _ivm_z
  GROUP BY `id`, `weird ``name```
  HAVING sum(_ivm_weight) <> 0
) AS _ivm_c
;
SELECT _ivm_weight, CAST(1 AS BIGINT) AS _ivm_seq
FROM (
  SELECT CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight
  FROM (
    SELECT CAST(1 AS BIGINT) AS _ivm_weight FROM `s`.`t` VERSION AS OF 42
  ) AS _ivm_z
  HAVING sum(_ivm_weight) <> 0
) AS _ivm_c
