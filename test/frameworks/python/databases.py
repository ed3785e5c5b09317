"""The test databases of the framework tests, made and dropped through the
server's postgres database (connection from PGHOST, PGPORT and PGUSER)."""

import psycopg2


def _admin(sql):
    conn = psycopg2.connect(dbname="postgres")
    conn.autocommit = True
    try:
        with conn.cursor() as cur:
            for statement in sql:
                cur.execute(statement)
    finally:
        conn.close()


def fresh(name):
    """An empty database of this name, whatever a failed run left."""
    _admin([f"DROP DATABASE IF EXISTS {name} WITH (FORCE)",
            f"CREATE DATABASE {name}"])


def drop(name):
    _admin([f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"])
