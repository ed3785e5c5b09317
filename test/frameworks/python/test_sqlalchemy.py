"""idgen through Debian's SQLAlchemy and Alembic (python3-sqlalchemy,
python3-alembic, on psycopg2): the declarative model (sa_shop.py), its
table made by an Alembic migration (alembic_shop/) run through Alembic's
command API, IDs read back from the ORM's inserts, paging by time on the
primary key, and IDs in JSON as JavaScript reads it.

Run with Debian's interpreter, against a server with idgen preloaded; the
connection comes from PGHOST, PGPORT and PGUSER, and the test makes its
own database:

    cd test/frameworks/python && /usr/bin/python3 -m unittest -v test_sqlalchemy
"""

import json
import os
import time
import unittest
import uuid
from datetime import timedelta

import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from sqlalchemy.orm import Session

import databases
from node_json import node_ids, not_doubles
from sa_shop import Base, Order

DB = "idgen_sqlalchemy"
HERE = os.path.dirname(os.path.abspath(__file__))


def names(n):
    tag = uuid.uuid4().hex[:8]
    return [f"{tag}-{i}" for i in range(n)]


class SQLAlchemyIdgen(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        databases.fresh(DB)
        host = os.environ.get("PGHOST", "")
        port = os.environ.get("PGPORT", "5432")
        user = os.environ.get("PGUSER", "")
        # future=True: 2.0's behaviour on 1.4, and accepted by 2.0
        cls.engine = sa.create_engine(
            f"postgresql+psycopg2://{user}@/{DB}?host={host}&port={port}", future=True)
        # alembic upgrade head, through Alembic's command API
        cfg = Config()
        cfg.set_main_option("script_location", os.path.join(HERE, "alembic_shop"))
        with cls.engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "head")

    @classmethod
    def tearDownClass(cls):
        cls.engine.dispose()
        databases.drop(DB)

    # ---- helpers ---------------------------------------------------------

    def server_digits(self, session, names):
        rows = session.execute(
            sa.text("SELECT name, id::text FROM orders WHERE name = ANY(:names)"),
            {"names": list(names)})
        return dict(rows.all())

    def assert_exact_increasing(self, session, objs):
        ids = [o.id for o in objs]
        for i in ids:
            self.assertIs(type(i), int)
        self.assertEqual(len(set(ids)), len(ids))
        self.assertEqual(ids, sorted(ids))
        digits = self.server_digits(session, (o.name for o in objs))
        self.assertEqual([str(o.id) for o in objs], [digits[o.name] for o in objs])

    def add_until_not_doubles(self, session, want=10):
        """Orders added 50 at a time until at least `want` of their IDs are
        not doubles: the IDs a JSON number cannot carry to JavaScript."""
        made = []
        for _ in range(20):
            objs = [Order(name=n) for n in names(50)]
            session.add_all(objs)
            session.flush()
            made += objs
            if len(not_doubles(o.id for o in made)) >= want:
                return made
        self.fail("no IDs above 2^53 that a double cannot hold")

    # ---- the migration -----------------------------------------------------

    def test_migration_made_the_column_and_autogenerate_proposes_nothing(self):
        with self.engine.connect() as conn:
            column = conn.execute(sa.text(
                """SELECT data_type, column_default, is_identity,
                          pg_get_serial_sequence('orders', 'id')
                     FROM information_schema.columns
                    WHERE table_name = 'orders' AND column_name = 'id'""")).one()
            self.assertEqual(tuple(column), ("bigint", "idgen_next()", "NO", None))
            self.assertEqual(conn.execute(sa.text(
                "SELECT version_num FROM alembic_version")).scalar_one(), "0001")
            context = MigrationContext.configure(
                conn, opts={"compare_server_default": True})
            self.assertEqual(compare_metadata(context, Base.metadata), [])

    def test_create_all_from_the_models_makes_the_same_column(self):
        # what test suites and scripts make from the models: without
        # server_default it would be BIGSERIAL, which autogenerate does not
        # report on a primary key
        with self.engine.connect() as conn:
            tx = conn.begin()
            conn.execute(sa.text("CREATE SCHEMA created_all"))
            translated = conn.execution_options(schema_translate_map={None: "created_all"})
            Base.metadata.create_all(translated)
            column = conn.execute(sa.text(
                """SELECT data_type, column_default, is_identity,
                          pg_get_serial_sequence('created_all.orders', 'id')
                     FROM information_schema.columns
                    WHERE table_schema = 'created_all' AND table_name = 'orders'
                      AND column_name = 'id'""")).one()
            tx.rollback()
        self.assertEqual(tuple(column), ("bigint", "idgen_next()", "NO", None))

    # ---- IDs read back from inserts ---------------------------------------

    def test_orm_add_reads_the_id_back(self):
        with Session(self.engine) as session:
            first, second = (Order(name=n) for n in names(2))
            session.add(first)
            session.flush()
            session.add(second)
            session.commit()
            self.assertGreater(first.id, 2 ** 53)
            self.assert_exact_increasing(session, [first, second])

    def test_orm_add_all_reads_the_ids_back(self):
        with Session(self.engine) as session:
            objs = [Order(name=n) for n in names(50)]
            session.add_all(objs)
            session.commit()
            self.assert_exact_increasing(session, objs)

    def test_insert_returning_of_50_rows_in_one_statement(self):
        batch = names(50)
        with Session(self.engine) as session:
            rows = session.execute(
                sa.insert(Order).values([{"name": n} for n in batch])
                .returning(Order.id, Order.name)).all()
            session.commit()
            self.assertEqual([r.name for r in rows], batch)
            ids = [r.id for r in rows]
            self.assertEqual(len(set(ids)), 50)
            self.assertEqual(ids, sorted(ids))
            digits = self.server_digits(session, batch)
            self.assertEqual([str(r.id) for r in rows], [digits[r.name] for r in rows])

    # ---- paging by time --------------------------------------------------

    def test_page_by_time_is_a_primary_key_range_scan(self):
        with Session(self.engine) as session:
            # rows before the page, enough for the planner to prefer the index
            # for a page of 50 of them on its own, as on any real table
            session.execute(sa.text("""INSERT INTO orders (name)
                SELECT 'before ' || g FROM generate_series(1, 20000) g"""))
            session.commit()
            time.sleep(0.1)         # past the milliseconds the 20,000 borrowed
            page = [Order(name=n) for n in names(50)]
            session.add_all(page)
            session.commit()
            time.sleep(0.1)
            session.add(Order(name="after"))
            session.commit()
            session.execute(sa.text("ANALYZE orders"))

            created = sa.func.id_to_timestamp(Order.id, type_=sa.DateTime(timezone=True))
            first = session.execute(sa.select(created).where(Order.id == page[0].id)).scalar_one()
            last = session.execute(sa.select(created).where(Order.id == page[-1].id)).scalar_one()
            self.assertIsNotNone(first.tzinfo)
            start, end = first, last + timedelta(milliseconds=1)
            query = (sa.select(Order.id, created.label("created"))
                     .where(Order.id >= sa.func.min_id_at(start),
                            Order.id < sa.func.min_id_at(end))
                     .order_by(Order.id))
            rows = session.execute(query).all()
            self.assertEqual([r.id for r in rows], [o.id for o in page])
            for r in rows:
                self.assertTrue(start <= r.created < end, (r.created, start, end))
            # EXPLAIN of that very statement, with its parameters
            compiled = query.compile(session.get_bind())
            plan = "\n".join(session.connection().exec_driver_sql(
                "EXPLAIN " + str(compiled), compiled.params).scalars())
        self.assertRegex(plan, r"(Index Scan|Index Only Scan|Bitmap Index Scan)"
                               r"( using| on) orders_pkey", plan)
        self.assertRegex(plan, r"Index Cond: \(\(id >= '\d+'::bigint\) AND "
                               r"\(id < '\d+'::bigint\)\)", plan)

    # ---- JSON ------------------------------------------------------------

    def test_json_with_str_ids_reads_back_exact(self):
        with Session(self.engine) as session:
            made = self.add_until_not_doubles(session)
            session.commit()
            text = json.dumps([{"id": str(o.id), "name": o.name} for o in made])
            self.assertEqual(node_ids(text), [("string", str(o.id)) for o in made])

    def test_json_dumps_of_rows_loses_digits(self):
        with Session(self.engine) as session:
            made = self.add_until_not_doubles(session)
            session.commit()
            lost = not_doubles(o.id for o in made)
            rows = session.execute(sa.select(Order.id, Order.name)
                                   .where(Order.id.in_(lost)).order_by(Order.id)).all()
        text = json.dumps([dict(r._mapping) for r in rows])
        self.assertEqual([o["id"] for o in json.loads(text)], lost)  # Python's json keeps them
        back = node_ids(text)
        self.assertEqual(len(back), len(lost))
        for i, (kind, digits) in zip(lost, back):
            self.assertEqual(kind, "number")
            self.assertNotEqual(digits, str(i))             # another ID,
            self.assertEqual(int(digits), int(float(i)))    # the nearest double


if __name__ == "__main__":
    unittest.main()
