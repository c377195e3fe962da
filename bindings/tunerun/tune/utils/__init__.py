"""Ray's tune.utils, as far as Ray's example scripts import it:
mock_trainable's MyTrainableClass. Ray's other helpers here
(validate_save_restore, wait_for_gpu, diagnose_serialization) are absent."""
