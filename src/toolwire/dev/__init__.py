"""``toolwire dev``: a live development loop with a web inspector.

:mod:`.inspector` holds a client of the server under development and serves the page and
its JSON API (127.0.0.1, a random token in every URL); :mod:`.watch` notices changes to the
server's file; the page itself is plain HTML, CSS and JavaScript in ``static/``.
"""
