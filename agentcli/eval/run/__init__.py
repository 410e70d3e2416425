"""Running an eval: the request, the session, the runner and what it runs."""
