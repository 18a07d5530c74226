"""The app's side of the store: loading what the panes show and polling for changes
(loading), its writes in a queue of their own (writes, calls), a store that does not answer
(health, shown_cache), and the search index's backlog (search_indexing)."""
