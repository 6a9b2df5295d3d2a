"""Drivers that move bytes between a peer and a server session: stdio and in-memory."""
