"""Checks: the assertion table, its load-time rules, value matching, and the script tests' `t`."""
