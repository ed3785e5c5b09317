"""Django's settings for the tests of this directory, made once per
process: test_django.py runs the shop app's migrations in its database,
test_schema_tools.py runs inspectdb in its own."""

import os

DATABASES = {"default": "idgen_django", "schema_tools": "idgen_schema_tools"}


def setup():
    import django
    from django.conf import settings

    if settings.configured:
        return
    settings.configure(
        DATABASES={alias: {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": name,
            "HOST": os.environ.get("PGHOST", ""),
            "PORT": os.environ.get("PGPORT", ""),
            "USER": os.environ.get("PGUSER", ""),
        } for alias, name in DATABASES.items()},
        INSTALLED_APPS=["shop"],
        DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
        USE_TZ=True,
        TIME_ZONE="UTC",
    )
    django.setup()
