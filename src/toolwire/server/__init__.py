"""The Server users define tools on, the Context tools receive, and the per-connection session."""
