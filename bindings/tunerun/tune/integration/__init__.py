"""Ray Tune's framework callbacks: tune.integration.xgboost (xgboost's
TrainingCallback reporting each round) and tune.integration.ray_train
(TuneReportCallback: a TorchTrainer fitted in a trial reports to it).
Ray's other integrations (keras, pytorch_lightning, lightgbm, mlflow, wandb)
are not here."""
