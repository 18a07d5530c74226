"""The model and its values: entries (the commits of the tree), ids, timestamps, errors, and
the value classes they are written with."""
