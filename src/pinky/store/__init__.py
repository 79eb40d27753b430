"""All SQL lives in this package: the connection factory, ordered migrations and the queries."""

from pinky.store.connect import Database, open_database

__all__ = ["Database", "open_database"]
