"""What the app's keys do to the store (`operations`), each one transaction that copies and
deletes nothing, and their undo through the store's operation log (`undo`)."""
