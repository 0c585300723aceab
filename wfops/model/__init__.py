"""pydantic models of the three file kinds. Importing this package imports pydantic."""
