"""toolwire's loggers: whatever they log passes through secret redaction first
(:mod:`toolwire.redaction`, loaded with the first record, not at start-up)."""

from __future__ import annotations

import logging


def get_logger(name: str) -> logging.Logger:
    """``logging.getLogger(name)``, redacting every record logged on it."""
    logger = logging.getLogger(name)
    if not any(isinstance(existing, _Redaction) for existing in logger.filters):
        logger.addFilter(_Redaction())
    return logger


class _Redaction(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        from .redaction import RedactingFilter

        return RedactingFilter().filter(record)
