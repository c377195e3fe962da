"""Ray's tune.result: the names of the result keys, for scripts that spell
them as constants (result[SHOULD_CHECKPOINT] = True). The values are
Ray's strings; the keys every result gets here are training_iteration,
time_this_iter_s, time_total_s, timestamp, date, pid, trial_id and
iterations_since_restore."""

# Set by the trainable (or its return) and read by tunerun.
DONE = "done"
SHOULD_CHECKPOINT = "should_checkpoint"

# Added to each result.
TRAINING_ITERATION = "training_iteration"
TIME_THIS_ITER_S = "time_this_iter_s"
TIME_TOTAL_S = "time_total_s"
TIMESTAMP = "timestamp"
DATE = "date"
PID = "pid"
TRIAL_ID = "trial_id"
ITERATIONS_SINCE_RESTORE = "iterations_since_restore"

# Conventional metric names of Ray's examples and schedulers.
MEAN_ACCURACY = "mean_accuracy"
MEAN_LOSS = "mean_loss"
NEG_MEAN_LOSS = "neg_mean_loss"
EPISODE_REWARD_MEAN = "episode_reward_mean"
TIMESTEPS_TOTAL = "timesteps_total"
TIMESTEPS_THIS_ITER = "timesteps_this_iter"
EPISODES_TOTAL = "episodes_total"
