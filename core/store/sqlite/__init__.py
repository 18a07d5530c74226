"""The SQLite backend: opening a file and its transactions (`backend`), the schema and its
numbered migrations (`migrations`), the full-text index (`search_index`), the bulk writer of
imports (`bulk`) and the merge of scratch stores (`merge`). Its SQL statements are in
`core/store/statements`, beside PostgreSQL's."""
