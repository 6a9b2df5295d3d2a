"""Streamable HTTP: the ASGI application that serves a Server to clients of every protocol
version, and running it with uvicorn (or granian)."""
