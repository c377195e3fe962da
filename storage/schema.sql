-- tunerun experiment database, schema version 4.
--
-- One file per experiment: <storage_path>/<experiment>/experiment.db, in WAL
-- mode, so you can query it with the sqlite3 CLI or pandas while the sweep
-- runs without slowing it down:
--
--   sqlite3 -readonly runs/mnist/experiment.db 'SELECT * FROM best_trial'
--   pandas.read_sql('SELECT * FROM last_results', sqlite3.connect(path))
--
-- Start with the views at the end (all_results, last_results, best_trial,
-- best_result, and with several objectives objective_values and
-- pareto_front); they need no knowledge of the tables. Tables and views are a
-- contract: later versions add columns, never rename or remove them.
--
-- Conventions: times are unix seconds (REAL, fractional). Statuses are
-- upper-case words: trials PENDING, RUNNING, PAUSED, TERMINATED or ERROR;
-- the experiment RUNNING, FINISHED, INTERRUPTED or FAILED. JSON columns hold
-- text with sorted keys; read a field with json_extract(metrics, '$.loss').
--
-- NaN and infinity: JSON has no tokens for them, so in metrics, config,
-- old_config and new_config +inf is written as the number 1e999 and -inf as
-- -1e999 (json_extract gives Inf and -Inf, Python's json.loads inf), and
-- NaN as null. Each of those columns has a side column <column>_nonfinite:
-- NULL when the value holds no NaN or infinity, else a JSON object from the
-- JSON pointer of each one to "NaN", "Infinity" or "-Infinity", e.g.
-- {"/loss":"NaN"}. It tells a NaN from a null that was reported as null:
--   SELECT trial_id FROM results
--   WHERE json_extract(metrics_nonfinite, '$."/loss"') = 'NaN'
-- tunerun's own readers (Python's ResultGrid, tunerun.load) give NaN and
-- infinity back. Other JSON columns (spec, experiment_state) store both as
-- null.
--
-- tunerun applies this file, in one transaction, whenever it opens a
-- database for writing: it only adds what is missing (a new file's tables,
-- an index added since the file was written); `sqlite3 new.db < schema.sql`
-- builds an empty one too.
-- A version 1 file is upgraded when tunerun opens it for writing: the
-- *_nonfinite columns are added and the views recreated (metric_value then
-- excludes infinity too). A version 2 file gains the objectives table
-- (filled from the experiment's metric), the feasible column of the views
-- and the objective_values and pareto_front views. A version 3 file gains
-- the trial_last_result table, filled from its results, and the views that
-- read it (the same columns and rows as before). A version 4 file gains the
-- views that skip trials in ERROR (best_trial, best_result, pareto_front).
-- A version 5 file (or older) gains the trials columns suggest_s and
-- model_fit_s, NULL in the trials it already holds.
--
-- Constraints: a trial may report constraint values under the result key
-- "constraints", a number or a list of numbers, each <= 0 when satisfied
-- (Optuna's constraints_func). A result with a value > 0, or one that is
-- not a number (NaN), is infeasible; best_trial, best_result and
-- pareto_front count feasible results only. Without the key every result
-- is feasible.

-- Which revision of this schema the file holds. PRAGMA user_version carries
-- the same number and is the one tunerun checks: it refuses to open a file
-- newer than it understands.
CREATE TABLE IF NOT EXISTS schema_info (
  key TEXT PRIMARY KEY,  -- 'schema_version'
  value TEXT             -- '6'
);
INSERT OR REPLACE INTO schema_info (key, value) VALUES ('schema_version', '6');
PRAGMA user_version = 6;

-- The experiment itself: always exactly one row, id = 1.
CREATE TABLE IF NOT EXISTS experiment (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  name TEXT NOT NULL,          -- the experiment name (also its directory name)
  metric TEXT,                 -- the metric being optimised; '' when the sweep names none;
                               -- with several objectives the first (see objectives)
  mode TEXT NOT NULL CHECK (mode IN ('min', 'max')),  -- direction of "better" for metric
  spec TEXT,                   -- JSON: the whole sweep specification, as resolved
  created_at REAL,             -- when the experiment was first started
  status TEXT,                 -- RUNNING, FINISHED, INTERRUPTED or FAILED
  updated_at REAL              -- when this row last changed
);

-- The experiment's objectives, in the order the sweep lists them: one row
-- for a single metric, one per metric for several (metric = ["accuracy",
-- "latency_ms"], mode = ["max", "min"]), none without a metric.
CREATE TABLE IF NOT EXISTS objectives (
  position INTEGER PRIMARY KEY,  -- 0, 1, ...: the metric's place in the list
  metric TEXT NOT NULL,          -- a key of the results' metrics
  mode TEXT NOT NULL CHECK (mode IN ('min', 'max'))  -- which way is better
);
-- A version 2 file's single metric.
INSERT INTO objectives (position, metric, mode)
SELECT 0, metric, mode FROM experiment
WHERE coalesce(metric, '') <> '' AND NOT EXISTS (SELECT 1 FROM objectives);

-- One row per trial (one sampled configuration), created when the searcher
-- suggests it and updated as it runs.
CREATE TABLE IF NOT EXISTS trials (
  trial_id TEXT PRIMARY KEY,   -- "<experiment>_<index:05d>", e.g. mnist_00003
  trial_index INTEGER NOT NULL,  -- 0, 1, 2... in creation order
  config TEXT NOT NULL,        -- JSON: the hyperparameters this trial runs with
  status TEXT NOT NULL,        -- PENDING, RUNNING, PAUSED, TERMINATED or ERROR
  status_reason TEXT,          -- why it is in that state, e.g. "no free CPUs"
  trial_dir TEXT,              -- its directory: logs and checkpoint_<iteration:06d>/
  created_at REAL,             -- when the trial was created
  started_at REAL,             -- when it first started RUNNING; NULL until then
  finished_at REAL,            -- when it became TERMINATED or ERROR; NULL otherwise
  last_iteration INTEGER NOT NULL DEFAULT 0,  -- last training_iteration the controller recorded
  num_failures INTEGER NOT NULL DEFAULT 0,    -- failures so far (restarts use max_failures)
  error TEXT,                  -- for ERROR: the message and where it was raised
  config_nonfinite TEXT,       -- JSON: where config holds NaN/infinity (see the top); else NULL
  suggest_s REAL,              -- seconds the searcher's suggest call for this trial took
  model_fit_s REAL             -- of those, fitting the searcher's model; NULL when it fitted none
);
-- Creation order, a page at a time (the dashboard's trial table).
CREATE INDEX IF NOT EXISTS trials_by_index ON trials (trial_index);
-- The trials per status without reading their rows (the dashboard's summary).
CREATE INDEX IF NOT EXISTS trials_by_status ON trials (status);

-- One row per completed training iteration of a trial (one train::report
-- call across all ranks). (trial_id, training_iteration) is unique: tunerun
-- writes with INSERT OR IGNORE, so a result reported again (e.g. replayed
-- after a restore) never adds a second row; the first one written stays.
-- One exception: a PBT exploit that moves a trial back to an earlier donor
-- checkpoint deletes the trial's rows after it (see the exploits table).
CREATE TABLE IF NOT EXISTS results (
  trial_id TEXT NOT NULL REFERENCES trials (trial_id),
  training_iteration INTEGER NOT NULL,  -- 1, 2, 3... per trial
  timestamp REAL,              -- when the iteration completed, at the controller
  time_this_iter_s REAL,       -- seconds this iteration took
  time_total_s REAL,           -- seconds of training so far, over all iterations
  metrics TEXT NOT NULL,       -- JSON object: the metrics the trainable reported
  metrics_nonfinite TEXT,      -- JSON: where metrics holds NaN/infinity (see the top); else NULL
  PRIMARY KEY (trial_id, training_iteration)
);
-- The trials' values at one iteration (the dashboard's importance compares
-- trials at one budget).
CREATE INDEX IF NOT EXISTS results_by_iteration ON results (training_iteration);

-- Each trial's latest result (its highest training_iteration in results),
-- kept in the transaction that writes or deletes the result (by tunerun
-- as it inserts one, by the triggers below as one is deleted or changed),
-- with the experiment metric's value there as all_results computes it:
-- last_results and best_trial read it instead of searching every trial's
-- results and parsing their JSON. One row per trial that has reported. A
-- program that inserts results with SQL of its own, into a file without
-- them, fills it by applying this file again afterwards (see the end).
CREATE TABLE IF NOT EXISTS trial_last_result (
  trial_id TEXT PRIMARY KEY REFERENCES trials (trial_id),
  training_iteration INTEGER NOT NULL,  -- the trial's highest in results
  metric_value REAL,                    -- all_results.metric_value of that result
  feasible INTEGER NOT NULL,            -- all_results.feasible of that result
  num_results INTEGER NOT NULL          -- the trial's rows in results
) WITHOUT ROWID;

-- Every status change of every trial, oldest first: `tunerun status` reads
-- the reason a trial is pending or paused from here.
CREATE TABLE IF NOT EXISTS trial_events (
  id INTEGER PRIMARY KEY,      -- increasing: the order of the changes
  trial_id TEXT NOT NULL REFERENCES trials (trial_id),
  at REAL NOT NULL,            -- when the change happened
  from_status TEXT,            -- NULL for the trial's creation; = to_status for a note
                               -- that changed nothing (a checkpoint found missing)
  to_status TEXT NOT NULL,
  reason TEXT                  -- e.g. "no free CPUs", "stopped by ASHA", the error
);
CREATE INDEX IF NOT EXISTS trial_events_by_trial ON trial_events (trial_id, id);

-- The controller's own state, for `tunerun resume`: the searcher's and the
-- scheduler's saved state (JSON), written in the same transactions as the
-- results they have seen (at most about a second behind them). A state
-- that grows with the sweep (ASHA's rungs, HyperBand's brackets) is written
-- by what changed: an array the value holds empty at a JSON pointer goes on
-- in chunk rows keyed '<key>:<pointer>:<index, 9 digits>', e.g.
-- 'scheduler:/brackets/0/1/recorded:000000004', each a JSON array of its
-- next items. The state is the value with each array's chunks appended in
-- index order, as tunerun reads it back.
CREATE TABLE IF NOT EXISTS experiment_state (
  key TEXT PRIMARY KEY,        -- 'searcher', 'scheduler', 'controller', or a chunk's
  value TEXT NOT NULL,         -- JSON
  updated_at REAL NOT NULL
);

-- Every published checkpoint: trials/<trial_id>/checkpoint_<iteration:06d>/,
-- complete (published by an atomic rename) once its row exists.
CREATE TABLE IF NOT EXISTS checkpoints (
  trial_id TEXT NOT NULL REFERENCES trials (trial_id),
  training_iteration INTEGER NOT NULL,  -- the iteration whose report carried it
  path TEXT NOT NULL,          -- the checkpoint directory
  created_at REAL NOT NULL,    -- when it was published
  source TEXT NOT NULL DEFAULT 'report',  -- 'report', or 'clone of TRIAL_ID' (PBT)
  PRIMARY KEY (trial_id, training_iteration)
);

-- Every PBT exploit: the recipient trial restarted from the donor's
-- checkpoint with an explored config.
CREATE TABLE IF NOT EXISTS exploits (
  id INTEGER PRIMARY KEY,      -- increasing: the order of the exploits
  trial_id TEXT NOT NULL REFERENCES trials (trial_id),  -- the recipient
  donor_id TEXT NOT NULL REFERENCES trials (trial_id),
  training_iteration INTEGER NOT NULL,  -- the recipient's iteration when it paused
  donor_iteration INTEGER NOT NULL,     -- the donor checkpoint's iteration, where it resumes
  old_config TEXT NOT NULL,    -- JSON
  new_config TEXT NOT NULL,    -- JSON
  at REAL NOT NULL,
  old_config_nonfinite TEXT,   -- JSON: where old_config holds NaN/infinity; else NULL
  new_config_nonfinite TEXT    -- JSON: where new_config holds NaN/infinity; else NULL
);

-- Where each rank of each run of a trial ran, as the rank said when it
-- connected (with reuse_workers, also each trial a connected rank went on
-- to run); a run resumed after the controller stopped is an attempt of its
-- own, one past the highest recorded. SQL answers "which trials ran on node
-- n3". Runs on one machine record its hostname and an empty step.
CREATE TABLE IF NOT EXISTS placements (
  id INTEGER PRIMARY KEY,      -- increasing: the order the ranks started in
  trial_id TEXT NOT NULL REFERENCES trials (trial_id),
  attempt INTEGER NOT NULL,    -- 0 for the trial's first run, +1 per restart
  rank INTEGER NOT NULL,       -- 0 .. num_workers - 1
  host TEXT NOT NULL,          -- the rank's hostname
  step TEXT NOT NULL,          -- its Slurm job step, "JOB.STEP"; '' outside Slurm
  at REAL NOT NULL             -- when it started on the trial
);
CREATE INDEX IF NOT EXISTS placements_by_host ON placements (host);

-- Every result with its trial's config and status, and metric_value: the
-- value of the experiment's metric in that result, NULL when the result
-- lacks it or it is not a finite number (NaN, infinity or a string);
-- feasible: 1 unless the result's constraints say otherwise (see the top).
CREATE VIEW IF NOT EXISTS all_results AS
SELECT
  r.trial_id,
  r.training_iteration,
  r.timestamp,
  r.time_this_iter_s,
  r.time_total_s,
  r.metrics,
  t.config,
  t.status,
  -- The quoted path ($."name") lets metric names contain dots.
  -- abs(Inf) exceeds the largest double: an infinity (1e999) is no value.
  CASE WHEN json_type(r.metrics, '$."' || e.metric || '"') IN ('integer', 'real')
        AND abs(json_extract(r.metrics, '$."' || e.metric || '"')) <= 1.7976931348623157e308
       THEN json_extract(r.metrics, '$."' || e.metric || '"') END AS metric_value,
  t.trial_index,
  NOT EXISTS (SELECT 1 FROM json_each(r.metrics, '$.constraints') AS c
              WHERE c.type NOT IN ('integer', 'real') OR c.value > 0) AS feasible
FROM results AS r
JOIN trials AS t ON t.trial_id = r.trial_id
LEFT JOIN experiment AS e ON e.id = 1;

-- trial_last_result follows results: a result past the trial's latest
-- becomes it; deleting (or changing) the latest falls back to the highest
-- left; a new experiment metric recomputes every metric_value.
-- A result inserted: tunerun upserts the row itself from the values it has
-- parsed (a trigger re-reading the JSON cost the store half its results/s);
-- a file written by an earlier build loses that trigger.
DROP TRIGGER IF EXISTS trial_last_result_on_insert;
CREATE TRIGGER IF NOT EXISTS trial_last_result_on_delete AFTER DELETE ON results
BEGIN
  DELETE FROM trial_last_result WHERE trial_id = old.trial_id AND num_results <= 1;
  UPDATE trial_last_result SET num_results = num_results - 1 WHERE trial_id = old.trial_id;
  UPDATE trial_last_result SET (training_iteration, metric_value, feasible) =
    (SELECT a.training_iteration, a.metric_value, a.feasible FROM all_results AS a
     WHERE a.trial_id = old.trial_id ORDER BY a.training_iteration DESC LIMIT 1)
  WHERE trial_id = old.trial_id AND training_iteration = old.training_iteration;
END;
CREATE TRIGGER IF NOT EXISTS trial_last_result_on_update AFTER UPDATE ON results
BEGIN
  DELETE FROM trial_last_result WHERE trial_id IN (old.trial_id, new.trial_id);
  INSERT INTO trial_last_result (trial_id, training_iteration, metric_value, feasible,
                                 num_results)
  SELECT a.trial_id, a.training_iteration, a.metric_value, a.feasible,
         (SELECT count(*) FROM results WHERE trial_id = a.trial_id)
  FROM all_results AS a
  WHERE a.trial_id IN (old.trial_id, new.trial_id) AND a.training_iteration =
        (SELECT max(training_iteration) FROM results WHERE trial_id = a.trial_id);
END;
CREATE TRIGGER IF NOT EXISTS trial_last_result_on_metric AFTER UPDATE OF metric ON experiment
WHEN old.metric IS NOT new.metric
BEGIN
  UPDATE trial_last_result SET metric_value =
    (SELECT a.metric_value FROM all_results AS a
     WHERE a.trial_id = trial_last_result.trial_id
       AND a.training_iteration = trial_last_result.training_iteration);
END;

-- The latest result of each trial (its highest training_iteration), same
-- columns as all_results: one row per trial that has reported.
CREATE VIEW IF NOT EXISTS last_results AS
SELECT a.*
FROM trial_last_result AS k
JOIN all_results AS a
  ON a.trial_id = k.trial_id AND a.training_iteration = k.training_iteration;

-- The best trial: the one whose LAST result has the best metric_value under
-- the experiment's mode (min: smallest, max: largest). Trials in ERROR are
-- skipped (a failed trial's last value is where it broke, not a result), and
-- so are trials whose last result lacks a finite value (NaN and infinity are
-- never best) or is infeasible. Ties go to the earlier trial. Empty when no
-- trial qualifies. With several objectives: the best by the first
-- (pareto_front holds the trade-offs). Every tunerun reader (the CLI's
-- summary and `tunerun best`, ResultGrid, Python, the dashboard) judges so.
CREATE VIEW IF NOT EXISTS best_trial AS
WITH candidates AS (  -- one row a trial, no JSON: a scan is milliseconds
  SELECT k.trial_id, k.metric_value FROM trial_last_result AS k
  JOIN trials AS t ON t.trial_id = k.trial_id
  WHERE k.metric_value IS NOT NULL AND k.feasible AND t.status <> 'ERROR'),
best (value) AS (
  SELECT CASE e.mode
    WHEN 'max' THEN (SELECT max(metric_value) FROM candidates)
    ELSE (SELECT min(metric_value) FROM candidates) END
  FROM experiment AS e WHERE e.id = 1)
SELECT
  l.trial_id,
  l.config,
  e.metric,
  l.metric_value,
  l.training_iteration,
  l.status,
  l.metrics
FROM best
JOIN candidates AS k ON k.metric_value = best.value
JOIN last_results AS l ON l.trial_id = k.trial_id
JOIN experiment AS e ON e.id = 1
ORDER BY l.trial_index, l.training_iteration
LIMIT 1;

-- The best single result over all iterations of all trials (a trial may
-- have been better before it got worse), with all_results' columns and the
-- metric name. Infeasible results and the results of trials in ERROR are
-- skipped. Ties go to the earlier trial, then the earlier iteration.
CREATE VIEW IF NOT EXISTS best_result AS
SELECT a.*, e.metric
FROM all_results AS a
JOIN experiment AS e ON e.id = 1
WHERE a.metric_value IS NOT NULL AND a.feasible AND a.status <> 'ERROR'
ORDER BY CASE e.mode WHEN 'max' THEN -a.metric_value ELSE a.metric_value END,
         a.trial_index, a.training_iteration
LIMIT 1;

-- Each trial's value of each objective in its LAST result: one row per
-- (trial, objective) where that result holds a finite number for it.
-- loss is the value made lower-is-better (negated for a 'max' objective).
CREATE VIEW IF NOT EXISTS objective_values AS
SELECT
  l.trial_id,
  l.trial_index,
  l.training_iteration,
  o.position,
  o.metric,
  o.mode,
  json_extract(l.metrics, '$."' || o.metric || '"') AS value,
  CASE o.mode WHEN 'max' THEN -json_extract(l.metrics, '$."' || o.metric || '"')
              ELSE json_extract(l.metrics, '$."' || o.metric || '"') END AS loss,
  l.feasible
FROM last_results AS l
JOIN objectives AS o
WHERE json_type(l.metrics, '$."' || o.metric || '"') IN ('integer', 'real')
  AND abs(json_extract(l.metrics, '$."' || o.metric || '"')) <= 1.7976931348623157e308;

-- The trade-offs between the objectives: every trial not in ERROR whose
-- last result is feasible and has a finite value for every objective, with
--   rank      its non-dominated rank among those trials (NSGA-II's): 0 is
--             the Pareto front, the trials no other one beats (at least as
--             good in every objective and better in one); 1 the front of
--             the rest; and so on. With one objective, the order of values.
--   crowding  NSGA-II's crowding distance within its rank: per objective,
--             the gap between its two neighbours over the rank's range,
--             summed; infinity (Inf) at either end of an objective. Larger:
--             a more isolated trade-off.
--   objective_values  {metric: value} of its last result.
-- Ordered by rank, then crowding (largest first). The front alone:
--   sqlite3 -readonly runs/NAME/experiment.db \
--     'SELECT trial_id, objective_values FROM pareto_front WHERE rank = 0'
-- It costs O(n^2) in the n trials (about a second at a thousand).
CREATE VIEW IF NOT EXISTS pareto_front AS
WITH RECURSIVE
  vals AS MATERIALIZED (
    SELECT trial_id, trial_index, training_iteration, position, metric, value, loss, feasible
    FROM objective_values),
  complete AS MATERIALIZED (
    SELECT v.trial_id FROM vals AS v JOIN trials AS t ON t.trial_id = v.trial_id
    WHERE t.status <> 'ERROR' GROUP BY v.trial_id
    HAVING count(*) = (SELECT count(*) FROM objectives) AND min(v.feasible) = 1),
  points AS MATERIALIZED (
    SELECT v.* FROM vals AS v WHERE v.trial_id IN (SELECT trial_id FROM complete)),
  beats (winner, loser) AS MATERIALIZED (
    SELECT a.trial_id, b.trial_id
    FROM points AS a JOIN points AS b ON a.position = b.position AND a.trial_id <> b.trial_id
    GROUP BY a.trial_id, b.trial_id
    HAVING max(a.loss > b.loss) = 0 AND max(a.loss < b.loss) = 1),
  -- A trial's rank is the length of the longest chain of trials beating
  -- one another down to it.
  depth (trial_id, rank) AS (
    SELECT trial_id, 0 FROM complete
    UNION
    SELECT b.loser, depth.rank + 1 FROM depth JOIN beats AS b ON b.winner = depth.trial_id),
  ranked AS MATERIALIZED (SELECT trial_id, max(rank) AS rank FROM depth GROUP BY trial_id),
  gaps AS MATERIALIZED (
    SELECT p.trial_id,
           CASE WHEN lag(p.loss) OVER w IS NULL OR lead(p.loss) OVER w IS NULL THEN 1e999
                WHEN max(p.loss) OVER s = min(p.loss) OVER s THEN 0
                ELSE (lead(p.loss) OVER w - lag(p.loss) OVER w) * 1.0
                     / (max(p.loss) OVER s - min(p.loss) OVER s) END AS gap
    FROM points AS p JOIN ranked AS r ON r.trial_id = p.trial_id
    WINDOW w AS (PARTITION BY r.rank, p.position ORDER BY p.loss, p.trial_index),
           s AS (PARTITION BY r.rank, p.position))
SELECT
  r.trial_id,
  t.trial_index,
  r.rank,
  (SELECT total(g.gap) FROM gaps AS g WHERE g.trial_id = r.trial_id) AS crowding,
  (SELECT json_group_object(metric, value)
   FROM (SELECT metric, value FROM points AS p WHERE p.trial_id = r.trial_id ORDER BY position))
    AS objective_values,
  t.config,
  t.status,
  res.training_iteration,
  res.metrics
FROM ranked AS r
JOIN trials AS t ON t.trial_id = r.trial_id
JOIN results AS res ON res.trial_id = r.trial_id
 AND res.training_iteration = (SELECT max(training_iteration) FROM vals AS v
                               WHERE v.trial_id = r.trial_id)
ORDER BY r.rank, crowding DESC, t.trial_index;

-- A file from before trial_last_result (version 3 or older): filled from
-- its results once.
INSERT INTO trial_last_result (trial_id, training_iteration, metric_value, feasible, num_results)
SELECT a.trial_id, a.training_iteration, a.metric_value, a.feasible, m.n
FROM (SELECT trial_id, max(training_iteration) AS last, count(*) AS n
      FROM results GROUP BY trial_id) AS m
JOIN all_results AS a ON a.trial_id = m.trial_id AND a.training_iteration = m.last
WHERE NOT EXISTS (SELECT 1 FROM trial_last_result);
