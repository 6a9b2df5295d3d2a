"""Prompts: message templates from functions, their arguments and their messages."""
