"""What schema tools see of a database with idgen, through Debian's
Alembic (python3-alembic, on SQLAlchemy and psycopg2) and Django
(python3-django): the user's tables alone.

Alembic's autogenerate compares the database with the application's
models and proposes a migration for every difference: with a table of
idgen in the schema (1.3's layout history) it proposed dropping it in
every new migration.  Django's inspectdb writes a model for every table.

Run with Debian's interpreter, against a server with idgen preloaded; the
connection comes from PGHOST, PGPORT and PGUSER, and the test makes its
own database:

    cd test/frameworks/python && /usr/bin/python3 -m unittest -v test_schema_tools
"""

import io
import os
import unittest

import psycopg2
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata, produce_migrations, render_python_code
from alembic.migration import MigrationContext

import databases
import django_settings

DB = django_settings.DATABASES["schema_tools"]
TABLE = """CREATE TABLE orders (
    id bigint PRIMARY KEY DEFAULT idgen_next(),
    name text NOT NULL)"""


class SchemaTools(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        databases.fresh(DB)
        conn = psycopg2.connect(dbname=DB)
        with conn.cursor() as cur:
            cur.execute("CREATE EXTENSION idgen")
            cur.execute(TABLE)
            cur.execute("INSERT INTO orders (name) VALUES ('first')")
        conn.commit()
        conn.close()
        host = os.environ.get("PGHOST", "")
        port = os.environ.get("PGPORT", "5432")
        user = os.environ.get("PGUSER", "")
        # a socket directory goes in the query string, as libpq takes it
        cls.engine = sa.create_engine(
            f"postgresql+psycopg2://{user}@/{DB}?host={host}&port={port}")

    @classmethod
    def tearDownClass(cls):
        cls.engine.dispose()
        databases.drop(DB)

    def models(self):
        metadata = sa.MetaData()
        sa.Table("orders", metadata,
                 sa.Column("id", sa.BigInteger, primary_key=True,
                           server_default=sa.text("idgen_next()")),
                 sa.Column("name", sa.Text, nullable=False))
        return metadata

    def test_alembic_autogenerate_proposes_nothing(self):
        with self.engine.connect() as conn:
            context = MigrationContext.configure(conn)
            diff = compare_metadata(context, self.models())
            script = render_python_code(produce_migrations(context, self.models()).upgrade_ops)
        self.assertEqual(diff, [], script)
        self.assertNotIn("idgen", script)

    def test_sqlalchemy_reflects_the_users_tables_alone(self):
        self.assertEqual(sa.inspect(self.engine).get_table_names(), ["orders"])

    def test_django_inspectdb_shows_the_users_tables_alone(self):
        import django.db
        from django.core.management import call_command

        # one set of settings per process, shared with test_django
        django_settings.setup()
        out = io.StringIO()
        call_command("inspectdb", database="schema_tools", stdout=out)
        django.db.connections.close_all()
        models = [line.split("(")[0].split()[1]
                  for line in out.getvalue().splitlines()
                  if line.startswith("class ") and not line.startswith("class Meta")]
        self.assertEqual(models, ["Orders"], out.getvalue())
        self.assertNotIn("idgen", out.getvalue().replace("idgen_next", ""))


if __name__ == "__main__":
    unittest.main()
