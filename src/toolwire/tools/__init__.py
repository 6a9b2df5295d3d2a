"""Tools: definitions, schemas from signatures, validation and results."""
