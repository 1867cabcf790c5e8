CREATE SCHEMA IF NOT EXISTS `s_ivm`
;
CREATE TABLE IF NOT EXISTS `s_ivm`.`m__log` (seq BIGINT, status STRING, mode STRING, reason STRING, fingerprint STRING, watermarks STRING, target_snapshot BIGINT, rows_inserted BIGINT, rows_deleted BIGINT, target_columns STRING, model_sql STRING, snapshots STRING, logged_at TIMESTAMP, row_counts STRING, changes_from BIGINT) USING iceberg
TBLPROPERTIES ('write.metadata.delete-after-commit.enabled' = 'true', 'write.metadata.previous-versions-max' = '10')
;
CREATE TABLE IF NOT EXISTS `s_ivm`.`m__lock` (k STRING, owner STRING, seq BIGINT, expires_at BIGINT) USING iceberg
TBLPROPERTIES ('write.metadata.delete-after-commit.enabled' = 'true', 'write.metadata.previous-versions-max' = '10')
;
SELECT * FROM (SELECT 'last' AS which, seq, status, mode, fingerprint, watermarks, target_snapshot, target_columns, model_sql, snapshots, row_counts, changes_from FROM `s_ivm`.`m__log` WHERE status <> 'fenced' ORDER BY seq DESC, CASE status WHEN 'committed' THEN 1 ELSE 0 END DESC LIMIT 1)
UNION ALL
SELECT * FROM (SELECT 'committed' AS which, seq, status, mode, fingerprint, watermarks, target_snapshot, target_columns, model_sql, snapshots, row_counts, changes_from FROM `s_ivm`.`m__log` WHERE status = 'committed' ORDER BY seq DESC LIMIT 1)
;
INSERT INTO `s_ivm`.`m__log` SELECT 8, 'committed', 'incremental', NULL, 'fp', '{}', (SELECT snapshot_id FROM `s`.`m`.refs WHERE name = 'main'), 3, 1, '[]', 'select 1', to_json(map_from_arrays(array('s.m'), array((SELECT snapshot_id FROM `s`.`m`.refs WHERE name = 'main')))), current_timestamp(), '{}'
;
SELECT stack(2, 'high', 'raw.orders', high, 'rows', 'raw.orders', n) AS (kind, k, v) FROM (SELECT CAST(max(_ivm_seq) AS BIGINT) AS high, CAST(count(*) AS BIGINT) AS n FROM `raw`.`orders_changes`) AS _ivm_marks
UNION ALL
SELECT stack(4, 'high', 's.up', high, 'changes_from', 's.up', changes_from, 'upstream_snapshot', 's.up', snap, 'rows', 's.up', published) AS (kind, k, v) FROM (SELECT CAST(max(seq) AS BIGINT) AS high, CAST(max_by(changes_from, seq) AS BIGINT) AS changes_from, CAST(max_by(target_snapshot, seq) AS BIGINT) AS snap, CAST(get_json_object(max_by(row_counts, seq), '$.published') AS BIGINT) AS published FROM `s_ivm`.`up__log` WHERE status = 'committed') AS _ivm_upstream
UNION ALL
SELECT 'snapshot' AS kind, 's.m' AS k, snapshot_id AS v FROM (SELECT snapshot_id FROM `s`.`m`.refs WHERE name = 'main') AS _ivm_ref
UNION ALL
SELECT 'lock' AS kind, concat_ws('|', owner, CAST(seq AS STRING), CAST(expires_at AS STRING)) AS k, CAST(0 AS BIGINT) AS v FROM `s_ivm`.`m__lock` WHERE k = 'lock'
UNION ALL
SELECT stack(2, 'high', 'raw.items', _ivm_ref.snapshot_id, 'rows', 'raw.items', CAST(_ivm_s.summary['total-records'] AS BIGINT)) AS (kind, k, v) FROM (SELECT snapshot_id FROM `raw`.`items`.refs WHERE name = 'main') AS _ivm_ref LEFT JOIN `raw`.`items`.snapshots AS _ivm_s ON _ivm_s.snapshot_id = _ivm_ref.snapshot_id
UNION ALL
SELECT stack(2, 'lineage', 'raw.items', lineage, 'changed', 'raw.items', changed) AS (kind, k, v) FROM (
  SELECT CAST(count_if(consumed) + count_if(consumed AND ancestor) AS BIGINT) AS lineage,
    CAST(CASE WHEN count_if(ancestor AND operation <> 'replace' AND committed_at > since AND coalesce(CAST(summary['added-delete-files'] AS BIGINT), 0) > 0) = 0 THEN coalesce(sum(CASE WHEN ancestor AND operation <> 'replace' AND committed_at > since THEN coalesce(CAST(summary['added-records'] AS BIGINT), 0) + coalesce(CAST(summary['deleted-records'] AS BIGINT), 0) END), 0) END AS BIGINT) AS changed
  FROM (
    SELECT *, max(CASE WHEN consumed THEN committed_at END) OVER () AS since FROM (
      SELECT _ivm_s.operation, _ivm_s.summary, _ivm_s.committed_at,
        _ivm_s.snapshot_id = 41 AS consumed, _ivm_a.snapshot_id IS NOT NULL AS ancestor
      FROM `raw`.`items`.snapshots AS _ivm_s LEFT JOIN (
        SELECT DISTINCT snapshot_id FROM `raw`.`items`.history WHERE is_current_ancestor
      ) AS _ivm_a ON _ivm_s.snapshot_id = _ivm_a.snapshot_id
    ) AS _ivm_marked
  ) AS _ivm_snapshots
) AS _ivm_lineage
UNION ALL
SELECT stack(2, 'high', 'raw.customers', _ivm_ref.snapshot_id, 'rows', 'raw.customers', CAST(_ivm_s.summary['total-records'] AS BIGINT)) AS (kind, k, v) FROM (SELECT snapshot_id FROM `raw`.`customers`.refs WHERE name = 'main') AS _ivm_ref LEFT JOIN `raw`.`customers`.snapshots AS _ivm_s ON _ivm_s.snapshot_id = _ivm_ref.snapshot_id
;
SELECT CAST(count(*) AS BIGINT) AS n FROM `s_ivm`.`m__index__raw__orders`
;
SELECT CAST(s.summary['total-records'] AS BIGINT) - coalesce(CAST(s.summary['total-position-deletes'] AS BIGINT), 0) AS n FROM `s`.`m`.snapshots AS s JOIN `s`.`m`.refs AS r ON s.snapshot_id = r.snapshot_id WHERE r.name = 'main'
;
SELECT *, NULL AS kind, NULL AS k, NULL AS v FROM (SELECT * FROM (SELECT 'last' AS which, seq, status, mode, fingerprint, watermarks, target_snapshot, target_columns, model_sql, snapshots, row_counts, changes_from FROM `s_ivm`.`m__log` WHERE status <> 'fenced' ORDER BY seq DESC, CASE status WHEN 'committed' THEN 1 ELSE 0 END DESC LIMIT 1)
UNION ALL
SELECT * FROM (SELECT 'committed' AS which, seq, status, mode, fingerprint, watermarks, target_snapshot, target_columns, model_sql, snapshots, row_counts, changes_from FROM `s_ivm`.`m__log` WHERE status = 'committed' ORDER BY seq DESC LIMIT 1)) AS _ivm_log
UNION ALL
SELECT NULL AS which, NULL AS seq, NULL AS status, NULL AS mode, NULL AS fingerprint, NULL AS watermarks, NULL AS target_snapshot, NULL AS target_columns, NULL AS model_sql, NULL AS snapshots, NULL AS row_counts, NULL AS changes_from, kind, k, v FROM (SELECT stack(2, 'high', 'raw.orders', high, 'rows', 'raw.orders', n) AS (kind, k, v) FROM (SELECT CAST(max(_ivm_seq) AS BIGINT) AS high, CAST(count(*) AS BIGINT) AS n FROM `raw`.`orders_changes`) AS _ivm_marks
UNION ALL
SELECT 'input_snapshot' AS kind, 'raw.orders' AS k, snapshot_id AS v FROM (SELECT snapshot_id FROM `raw`.`orders_changes`.refs WHERE name = 'main') AS _ivm_ref
UNION ALL
SELECT 'snapshot' AS kind, 's.m' AS k, snapshot_id AS v FROM (SELECT snapshot_id FROM `s`.`m`.refs WHERE name = 'main') AS _ivm_ref
UNION ALL
SELECT stack(2, 'high', 'raw.items', _ivm_ref.snapshot_id, 'rows', 'raw.items', CAST(_ivm_s.summary['total-records'] AS BIGINT)) AS (kind, k, v) FROM (SELECT snapshot_id FROM `raw`.`items`.refs WHERE name = 'main') AS _ivm_ref LEFT JOIN `raw`.`items`.snapshots AS _ivm_s ON _ivm_s.snapshot_id = _ivm_ref.snapshot_id
UNION ALL
SELECT stack(2, 'lineage', 'raw.items', lineage, 'changed', 'raw.items', changed) AS (kind, k, v) FROM (
  SELECT CAST(count_if(consumed) + count_if(consumed AND ancestor) AS BIGINT) AS lineage,
    CAST(CASE WHEN count_if(ancestor AND operation <> 'replace' AND committed_at > since AND coalesce(CAST(summary['added-delete-files'] AS BIGINT), 0) > 0) = 0 THEN coalesce(sum(CASE WHEN ancestor AND operation <> 'replace' AND committed_at > since THEN coalesce(CAST(summary['added-records'] AS BIGINT), 0) + coalesce(CAST(summary['deleted-records'] AS BIGINT), 0) END), 0) END AS BIGINT) AS changed
  FROM (
    SELECT *, max(CASE WHEN consumed THEN committed_at END) OVER () AS since FROM (
      SELECT _ivm_s.operation, _ivm_s.summary, _ivm_s.committed_at,
        _ivm_s.snapshot_id = (SELECT m['raw.items'] FROM (SELECT from_json(watermarks, 'map<string,bigint>') AS m FROM `s_ivm`.`m__log` WHERE status <> 'fenced' ORDER BY seq DESC, CASE status WHEN 'committed' THEN 1 ELSE 0 END DESC LIMIT 1) AS _ivm_last) AS consumed, _ivm_a.snapshot_id IS NOT NULL AS ancestor
      FROM `raw`.`items`.snapshots AS _ivm_s LEFT JOIN (
        SELECT DISTINCT snapshot_id FROM `raw`.`items`.history WHERE is_current_ancestor
      ) AS _ivm_a ON _ivm_s.snapshot_id = _ivm_a.snapshot_id
    ) AS _ivm_marked
  ) AS _ivm_snapshots
) AS _ivm_lineage) AS _ivm_capture
;
SELECT 's.up' AS k, max(target_snapshot) AS snap, CAST(7 AS BIGINT) AS seq FROM `s_ivm`.`up__log` WHERE status = 'committed' AND seq = 7
UNION ALL
SELECT 'raw.orders' AS k, _ivm_t.tag.snap, _ivm_t.tag.seq FROM (SELECT max_by(named_struct('snap', snapshot_id, 'seq', CAST(substr(name, 9) AS BIGINT)), CAST(substr(name, 9) AS BIGINT)) FILTER (WHERE CAST(substr(name, 9) AS BIGINT) <= 7) AS tag FROM `raw`.`orders`.refs WHERE type = 'TAG' AND name RLIKE '^ivm_seq_[0-9]{1,18}$') AS _ivm_t WHERE _ivm_t.tag IS NOT NULL
;
SELECT inline(array(named_struct('probe', 'tag at raw.orders', 'bad', CAST(NULL AS BIGINT), 'total', CAST(NULL AS BIGINT), 'deletes', CAST(NULL AS BIGINT), 'lo', CAST(_ivm_p0_tag.snap AS STRING), 'hi', CAST(_ivm_p0_tag.seq AS STRING), 'keys', CAST(NULL AS ARRAY<STRING>)), named_struct('probe', 'tag above raw.orders', 'bad', CAST(NULL AS BIGINT), 'total', CAST(NULL AS BIGINT), 'deletes', CAST(NULL AS BIGINT), 'lo', CAST(_ivm_p1_tag.snap AS STRING), 'hi', CAST(_ivm_p1_tag.seq AS STRING), 'keys', CAST(NULL AS ARRAY<STRING>))))
FROM (
  SELECT max_by(named_struct('snap', snapshot_id, 'seq', CAST(substr(name, 9) AS BIGINT)), CAST(substr(name, 9) AS BIGINT)) FILTER (WHERE CAST(substr(name, 9) AS BIGINT) <= 7) AS _ivm_p0_tag, min_by(named_struct('snap', snapshot_id, 'seq', CAST(substr(name, 9) AS BIGINT)), CAST(substr(name, 9) AS BIGINT)) FILTER (WHERE CAST(substr(name, 9) AS BIGINT) > 7) AS _ivm_p1_tag
  FROM `raw`.`orders`.refs
  WHERE type = 'TAG' AND name RLIKE '^ivm_seq_[0-9]{1,18}$'
) AS _ivm_probe
;
SELECT owner, seq, expires_at FROM `s_ivm`.`m__lock` WHERE k = 'lock'
;
MERGE INTO `s_ivm`.`m__lock` AS t USING (SELECT 'lock' AS k) AS s ON t.k = s.k
WHEN MATCHED AND FALSE THEN UPDATE SET t.owner = 'host:1:abc', t.seq = 8, t.expires_at = 1700000000
WHEN MATCHED THEN UPDATE SET t.owner = CAST(raise_error(concat('ivm lock taken by ', t.owner)) AS STRING)
WHEN NOT MATCHED THEN INSERT (k, owner, seq, expires_at) VALUES ('lock', 'host:1:abc', 8, 1700000000)
;
MERGE INTO `s_ivm`.`m__lock` AS t USING (SELECT 'lock' AS k) AS s ON t.k = s.k
WHEN MATCHED AND t.owner = 'host:2:o\'ld:id' AND t.seq = 7 AND t.expires_at = 1699999000 THEN UPDATE SET t.owner = 'host:1:abc:id', t.seq = 8, t.expires_at = 1700000000
WHEN MATCHED THEN UPDATE SET t.owner = CAST(raise_error(concat('ivm lock taken by ', t.owner)) AS STRING)
WHEN NOT MATCHED THEN INSERT (k, owner, seq, expires_at) VALUES ('lock', 'host:1:abc:id', 8, 1700000000)
;
MERGE INTO `s_ivm`.`m__lock` AS t USING (SELECT 'lock' AS k) AS s ON t.k = s.k
WHEN MATCHED AND t.owner = 'host:1:abc:id' AND t.seq = 8 THEN UPDATE SET t.owner = 'host:1:abc:id', t.seq = 8, t.expires_at = 1700000900
WHEN MATCHED THEN UPDATE SET t.owner = CAST(raise_error(concat('ivm lock taken by ', t.owner)) AS STRING)
WHEN NOT MATCHED THEN INSERT (k, owner, seq, expires_at) VALUES ('lock', 'host:1:abc:id', 8, 1700000900)
;
UPDATE `s_ivm`.`m__lock` SET expires_at = 0 WHERE owner = 'host:1:abc'
;
INSERT INTO `s_ivm`.`m__log` SELECT 8, 'fenced', NULL, 'host:2:o\'ld:id', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, current_timestamp(), NULL, NULL
;
MERGE INTO `s_ivm`.`m__log` AS t USING (SELECT 8 AS seq, 'committed' AS status, 'incremental' AS mode, NULL AS reason, 'fp' AS fingerprint, '{}' AS watermarks, (SELECT snapshot_id FROM `s`.`m`.refs WHERE name = 'main') AS target_snapshot, 3 AS rows_inserted, 1 AS rows_deleted, '[]' AS target_columns, 'select 1' AS model_sql, '{}' AS snapshots, current_timestamp() AS logged_at, '{}' AS row_counts, 0 AS changes_from) AS s
ON t.seq = 8 AND (t.status = 'committed' OR (t.status = 'fenced' AND t.reason = 'host:1:abc:id'))
WHEN MATCHED THEN UPDATE SET t.status = CAST(raise_error(concat('ivm lease fenced ', t.status)) AS STRING)
WHEN NOT MATCHED THEN INSERT *
;
CALL spark_catalog.system.set_current_snapshot('`s`.`m`', 42)
;
SELECT 's.m' AS name, CAST(unix_millis(max(b)) AS BIGINT) AS older_than_ms, CAST(count_if(s.committed_at < b) AS BIGINT) AS old_snapshots, (SELECT CAST(count(*) AS BIGINT) FROM `s`.`m`.data_files WHERE file_size_in_bytes < 8388608) AS small_files
FROM `s`.`m`.snapshots AS s CROSS JOIN (SELECT least(current_timestamp() - make_dt_interval(0, 0, 0, 3600), coalesce((SELECT max(committed_at) FROM `s`.`m`.snapshots WHERE snapshot_id = 42), current_timestamp())) AS b) AS _ivm_b
UNION ALL
SELECT 's_ivm.m__log' AS name, CAST(unix_millis(max(b)) AS BIGINT) AS older_than_ms, CAST(count_if(s.committed_at < b) AS BIGINT) AS old_snapshots, (SELECT CAST(count(*) AS BIGINT) FROM `s_ivm`.`m__log`.data_files WHERE file_size_in_bytes < 8388608) AS small_files
FROM `s_ivm`.`m__log`.snapshots AS s CROSS JOIN (SELECT least(current_timestamp() - make_dt_interval(0, 0, 0, 0), coalesce(CAST(NULL AS TIMESTAMP), current_timestamp())) AS b) AS _ivm_b
;
CALL spark_catalog.system.expire_snapshots(table => '`s`.`m`', older_than => TIMESTAMP '2026-11-28 19:48:18.371Z', retain_last => 1)
;
CALL spark_catalog.system.rewrite_data_files(table => '`s`.`m`', options => map('min-input-files', '2', 'min-file-size-bytes', '8388608'))
;
`s`.`m`.snapshot_id_42
;
SELECT CAST(s.summary['total-records'] AS BIGINT) - coalesce(CAST(s.summary['total-position-deletes'] AS BIGINT), 0) AS n FROM `s`.`m`.snapshots AS s JOIN `s`.`m`.refs AS r ON s.snapshot_id = r.snapshot_id WHERE r.name = 'main'
;
CACHE TABLE `_ivm_x_agg0` AS
SELECT 1
;
DROP VIEW IF EXISTS `_ivm_x_agg0`
;
DESCRIBE QUERY SELECT 1
;
SELECT *, CAST(0 AS BIGINT) AS _ivm_weight, CAST(0 AS BIGINT) AS _ivm_seq FROM `s`.`m` WHERE FALSE
;
DELETE FROM `s_ivm`.`m__changes` WHERE _ivm_seq > 7
;
DELETE FROM `s_ivm`.`m__changes` WHERE _ivm_seq <= 7
;
SELECT CAST(b AS BIGINT) AS behind, CAST(unix_timestamp(current_timestamp()) - unix_timestamp(o) AS DOUBLE) AS lag_seconds FROM (SELECT (SELECT count(DISTINCT _ivm_seq) FROM `raw`.`orders_changes` WHERE _ivm_seq > 7), coalesce((SELECT min(committed_at) FROM `raw`.`orders_changes`.snapshots WHERE committed_at > (SELECT max(logged_at) FROM `s_ivm`.`m__log` WHERE status = 'committed')), (SELECT max(logged_at) FROM `s_ivm`.`m__log` WHERE status = 'committed'))) AS _ivm_lag(b, o)
;
SELECT CAST(b AS BIGINT) AS behind, CAST(unix_timestamp(current_timestamp()) - unix_timestamp(o) AS DOUBLE) AS lag_seconds FROM (SELECT count(*), min(logged_at) FROM `s_ivm`.`up__log` WHERE status = 'committed' AND seq > 7) AS _ivm_lag(b, o)
;
SELECT CAST(b AS BIGINT) AS behind, CAST(unix_timestamp(current_timestamp()) - unix_timestamp(o) AS DOUBLE) AS lag_seconds FROM (SELECT count(*), min(made_current_at) FROM `raw`.`items`.history WHERE is_current_ancestor AND made_current_at > coalesce((SELECT made_current_at FROM `raw`.`items`.history WHERE snapshot_id = 42), timestamp'1970-01-01')) AS _ivm_lag(b, o)
;
SELECT CAST((SELECT m['s.m'] FROM (SELECT from_json(watermarks, 'map<string,bigint>') AS m FROM `s_ivm`.`down__log` WHERE status <> 'fenced' ORDER BY seq DESC, CASE status WHEN 'committed' THEN 1 ELSE 0 END DESC LIMIT 1) AS _ivm_last) AS BIGINT) AS consumed
;
SELECT `id`, `weird ``name```, _ivm_weight FROM `s_ivm`.`m__index__raw__orders`
;
'{}'
;
DESCRIBE TABLE `s`.`m`
;
DESCRIBE TABLE EXTENDED `s`.`m`
;
SELECT * FROM `s`.`m`
