"""Tools: definitions, schemas from signatures, validation, results and the registry."""
