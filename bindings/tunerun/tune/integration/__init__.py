"""Ray Tune's framework callbacks: tune.integration.xgboost (xgboost's
TrainingCallback reporting each round). Ray's other integrations (keras,
pytorch_lightning, lightgbm, mlflow, wandb) are not here."""
