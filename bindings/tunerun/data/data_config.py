"""Ray Train's DataConfig: which of a trainer's datasets are split between
its ranks. The rest reach every rank whole."""


class DataConfig:
    def __init__(self, datasets_to_split="all", execution_options=None,
                 enable_shard_locality=True):
        """datasets_to_split: "all" or a list of dataset names.
        execution_options and enable_shard_locality have no effect (the
        rows are in memory)."""
        if datasets_to_split != "all" and not isinstance(datasets_to_split, (list, tuple)):
            raise ValueError(f"DataConfig: datasets_to_split must be 'all' or a list of names, "
                             f"got {datasets_to_split!r}")
        self.datasets_to_split = datasets_to_split
        self.execution_options = execution_options

    def splits(self, name):
        return self.datasets_to_split == "all" or name in self.datasets_to_split

    @staticmethod
    def default_ingest_options():
        return None
