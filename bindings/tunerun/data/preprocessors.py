"""Ray Data's ray.data.preprocessors, the ones Ray Train's examples use:
fit() reads statistics from a Dataset, transform() maps its batches (as
pandas DataFrames), fit_transform() does both, transform_batch() applies a
fitted one to a pandas DataFrame or a dict of numpy arrays. Fitting and
transforming run at once in the driver, as the rest of tunerun.data.

StandardScaler (population standard deviation, as Ray's; a constant column
becomes 0), MinMaxScaler, LabelEncoder, OrdinalEncoder, OneHotEncoder
(columns <col>_<value>, as Ray 2.x before 2.10), SimpleImputer (mean,
most_frequent, constant), Concatenator (one numpy column of the others) and
Chain. Others of Ray's are absent.
"""


class PreprocessorNotFittedException(RuntimeError):
    pass


class Preprocessor:
    _is_fittable = True

    def __init__(self):
        self.stats_ = None

    def fit(self, ds):
        if self._is_fittable:
            self.stats_ = self._fit(ds)
        return self

    def fit_transform(self, ds):
        return self.fit(ds).transform(ds)

    def transform(self, ds):
        self._check_fitted()
        return ds.map_batches(self._transform_pandas, batch_format="pandas")

    def transform_batch(self, batch):
        import pandas as pd
        self._check_fitted()
        if isinstance(batch, pd.DataFrame):
            return self._transform_pandas(batch.copy())
        out = self._transform_pandas(pd.DataFrame({k: list(v) if getattr(v, "ndim", 1) > 1
                                                   else v for k, v in batch.items()}))
        return {c: out[c].to_numpy() for c in out.columns}

    def _check_fitted(self):
        if self._is_fittable and self.stats_ is None:
            raise PreprocessorNotFittedException(
                f"{type(self).__name__} is not fitted: call fit(dataset) first")

    def _fit(self, ds):
        return {}

    def __repr__(self):
        return f"{type(self).__name__}(columns={getattr(self, 'columns', None)!r})"


def _frame(ds, columns):
    return ds.select_columns(list(columns)).to_pandas()


class StandardScaler(Preprocessor):
    def __init__(self, columns):
        super().__init__()
        self.columns = list(columns)

    def _fit(self, ds):
        df = _frame(ds, self.columns)
        return {c: (float(df[c].mean()), float(df[c].std(ddof=0))) for c in self.columns}

    def _transform_pandas(self, df):
        for c in self.columns:
            mean, std = self.stats_[c]
            df[c] = (df[c] - mean) / std if std else 0.0
        return df


class MinMaxScaler(Preprocessor):
    def __init__(self, columns):
        super().__init__()
        self.columns = list(columns)

    def _fit(self, ds):
        df = _frame(ds, self.columns)
        return {c: (float(df[c].min()), float(df[c].max())) for c in self.columns}

    def _transform_pandas(self, df):
        for c in self.columns:
            low, high = self.stats_[c]
            df[c] = (df[c] - low) / (high - low) if high != low else 0.0
        return df


class OrdinalEncoder(Preprocessor):
    def __init__(self, columns):
        super().__init__()
        self.columns = list(columns)

    def _fit(self, ds):
        df = _frame(ds, self.columns)
        return {c: {v: i for i, v in enumerate(sorted(df[c].dropna().unique()))}
                for c in self.columns}

    def _transform_pandas(self, df):
        for c in self.columns:
            df[c] = df[c].map(self.stats_[c])
        return df


class LabelEncoder(OrdinalEncoder):
    def __init__(self, label_column):
        super().__init__([label_column])
        self.label_column = label_column


class OneHotEncoder(Preprocessor):
    def __init__(self, columns):
        super().__init__()
        self.columns = list(columns)

    def _fit(self, ds):
        df = _frame(ds, self.columns)
        return {c: sorted(df[c].dropna().unique()) for c in self.columns}

    def _transform_pandas(self, df):
        for c in self.columns:
            for value in self.stats_[c]:
                df[f"{c}_{value}"] = (df[c] == value).astype(int)
            df = df.drop(columns=[c])
        return df


class SimpleImputer(Preprocessor):
    def __init__(self, columns, strategy="mean", fill_value=None):
        super().__init__()
        if strategy not in ("mean", "most_frequent", "constant"):
            raise ValueError(f"SimpleImputer: strategy must be mean, most_frequent or "
                             f"constant, got {strategy!r}")
        if strategy == "constant" and fill_value is None:
            raise ValueError("SimpleImputer: strategy='constant' needs fill_value")
        self.columns, self.strategy, self.fill_value = list(columns), strategy, fill_value
        self._is_fittable = strategy != "constant"

    def _fit(self, ds):
        df = _frame(ds, self.columns)
        if self.strategy == "mean":
            return {c: float(df[c].mean()) for c in self.columns}
        return {c: df[c].mode().iloc[0] for c in self.columns}

    def _transform_pandas(self, df):
        for c in self.columns:
            df[c] = df[c].fillna(self.fill_value if self.strategy == "constant"
                                 else self.stats_[c])
        return df


class Concatenator(Preprocessor):
    """The columns (all but `exclude`, or `include`) as one numpy row each in
    `output_column_name`, the others dropped."""
    _is_fittable = False

    def __init__(self, output_column_name="concat_out", include=None, exclude=None,
                 dtype=None, raise_if_missing=False):
        super().__init__()
        self.output_column_name = output_column_name
        self.include, self.exclude = include, list(exclude or [])
        self.dtype, self.raise_if_missing = dtype, raise_if_missing

    def _transform_pandas(self, df):
        import numpy as np
        columns = list(self.include) if self.include is not None else \
            [c for c in df.columns if c not in self.exclude]
        missing = [c for c in columns if c not in df.columns]
        if missing and self.raise_if_missing:
            raise ValueError(f"Concatenator: missing columns {missing}")
        columns = [c for c in columns if c in df.columns]
        values = df[columns].to_numpy(dtype=self.dtype)
        out = df.drop(columns=columns)
        out[self.output_column_name] = list(np.asarray(values))
        return out


class Chain(Preprocessor):
    def __init__(self, *preprocessors):
        super().__init__()
        self.preprocessors = preprocessors

    def fit(self, ds):
        for p in self.preprocessors:
            ds = p.fit_transform(ds)
        self.stats_ = {}
        return self

    def fit_transform(self, ds):
        for p in self.preprocessors:
            ds = p.fit_transform(ds)
        self.stats_ = {}
        return ds

    def transform(self, ds):
        for p in self.preprocessors:
            ds = p.transform(ds)
        return ds

    def transform_batch(self, batch):
        for p in self.preprocessors:
            batch = p.transform_batch(batch)
        return batch
