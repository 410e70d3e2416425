"""Evaluation: case files, assertions, the runner, reports."""
