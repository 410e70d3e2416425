"""``agent view``: a local, read-only web viewer of the results files under a folder.

``runfile`` indexes one results file (byte offsets of its lines, each result's status, id,
tags and attribution) so a page parses only its own lines; ``catalog`` finds the results
files under the served folder and refuses any path outside it; ``pages`` turns a request's
filters into the rows of one page; ``app`` is the Starlette application rendering Jinja2
templates (sandboxed, autoescaped) from ``templates/``.
"""
