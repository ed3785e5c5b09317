"""A Django app whose tables are keyed on idgen IDs: test_django.py runs
its migrations against a real server."""
