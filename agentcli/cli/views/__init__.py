"""Views of an eval run: the console for a person, NDJSON events for a program."""
