"""arbor's terminal app (Textual). Talks to the store only through `core`."""
