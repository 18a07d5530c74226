"""The seed API: the session models, repositories, `SessionManager` and `MemoryStore`, with
every public name of the seed documents (../shared/seeds), over the arbor store."""
