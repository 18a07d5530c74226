"""Usage in the store: the rows an entry writer makes for each response, the reports read from
them, and the price cards an import prices new responses with."""
