"""Sessions going out of the store: files in other formats (`formats`) and copies to another
store, a team's PostgreSQL (`push`)."""
