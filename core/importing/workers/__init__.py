"""A big import's worker processes: the pool that feeds them batches (`parallel`), the worker
itself (`worker`) and the frames they speak on their pipes (`frames`)."""
