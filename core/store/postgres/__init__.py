"""The PostgreSQL backend, for a team's store: connecting to a server and its transactions
(`backend`), the schema and its numbered migrations (`migrations`), and the bulk writer of
imports (`bulk`). Its SQL statements are in `core/store/statements`, beside SQLite's."""
