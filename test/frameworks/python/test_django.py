"""idgen in a Django app, through Debian's Django (python3-django): the
shop app's model and migration (shop/), IDs read back from inserts,
paging by time on the primary key, and IDs in JSON as JavaScript reads it.

Django 5.0 and later put the default on the column with db_default;
before 5.0 the column is a BigAutoField's, moved onto idgen_next() by
idgen_convert_column() in the migration.  The tests check the way of the
version they run with, and the traps doc/frameworks.md warns of.

Run with Debian's interpreter, against a server with idgen preloaded; the
connection comes from PGHOST, PGPORT and PGUSER, and the test makes its
own database:

    cd test/frameworks/python && /usr/bin/python3 -m unittest -v test_django
"""

import io
import json
import time
import unittest
import uuid
from datetime import timedelta

import databases
import django_settings
from node_json import node_ids, not_doubles

DB = django_settings.DATABASES["default"]
LEGACY_TABLE = """CREATE TABLE legacy_orders (
    id bigint PRIMARY KEY DEFAULT idgen_next(),
    name text NOT NULL)"""


class DjangoIdgen(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        databases.fresh(DB)
        django_settings.setup()
        import django
        from django.core.management import call_command
        from django.db import connection

        cls.django_version = django.VERSION
        # migrate as a deployment runs it: the extension, then the tables
        call_command("migrate", verbosity=0)
        with connection.cursor() as cur:
            # a table made by SQL before the app had a model for it
            cur.execute(LEGACY_TABLE)

    @classmethod
    def tearDownClass(cls):
        from django.db import connections
        connections.close_all()
        databases.drop(DB)

    # ---- helpers ---------------------------------------------------------

    @staticmethod
    def names(n):
        tag = uuid.uuid4().hex[:8]
        return [f"{tag}-{i}" for i in range(n)]

    @staticmethod
    def server_digits(names):
        """id::text of each named row, as the server writes it."""
        from django.db import connection
        with connection.cursor() as cur:
            cur.execute("SELECT name, id::text FROM shop_order WHERE name = ANY(%s)",
                        [list(names)])
            return dict(cur.fetchall())

    def assert_exact_increasing(self, objs):
        ids = [o.pk for o in objs]
        for i in ids:
            self.assertIs(type(i), int)
        self.assertEqual(len(set(ids)), len(ids))
        self.assertEqual(ids, sorted(ids))
        digits = self.server_digits(o.name for o in objs)
        self.assertEqual([str(o.pk) for o in objs], [digits[o.name] for o in objs])

    def block_of_ids(self, n):
        """n IDs minted as one block, for objects created in bulk."""
        from django.db import connection
        with connection.cursor() as cur:
            cur.execute("SELECT idgen_next_n(%s)", [n])
            return [row[0] for row in cur.fetchall()]

    def bulk_until_not_doubles(self, want=10):
        """Orders made in bulk until at least `want` of their IDs are not
        doubles: the IDs a JSON number cannot carry to JavaScript."""
        from shop.models import Order
        made = []
        for _ in range(20):
            objs = [Order(pk=i, name=n)
                    for i, n in zip(self.block_of_ids(50), self.names(50))]
            made += Order.objects.bulk_create(objs)
            if len(not_doubles(o.pk for o in made)) >= want:
                return made
        self.fail("no IDs above 2^53 that a double cannot hold")

    # ---- the model and its migration ---------------------------------------

    def test_migration_made_the_column(self):
        from django.core.management import call_command
        from django.db import connection
        with connection.cursor() as cur:
            cur.execute("""SELECT data_type, column_default, is_identity,
                                  pg_get_serial_sequence('shop_order', 'id')
                             FROM information_schema.columns
                            WHERE table_name = 'shop_order' AND column_name = 'id'""")
            self.assertEqual(cur.fetchone(), ("bigint", "idgen_next()", "NO", None))
        # the migration is what the model says: makemigrations has nothing to add
        out = io.StringIO()
        try:
            call_command("makemigrations", "shop", check=True, dry_run=True, stdout=out)
        except SystemExit:
            self.fail("makemigrations proposes a migration:\n" + out.getvalue())

    # ---- IDs read back from inserts ---------------------------------------

    def test_create_reads_the_id_back(self):
        from shop.models import Order
        first, second = (Order.objects.create(name=n) for n in self.names(2))
        self.assertGreater(first.pk, 2 ** 53)
        self.assert_exact_increasing([first, second])
        self.assertEqual(Order.objects.get(pk=first.pk).name, first.name)

    def test_bulk_create_with_a_block_of_ids(self):
        from shop.models import Order
        names = self.names(50)
        objs = [Order(pk=i, name=n) for i, n in zip(self.block_of_ids(50), names)]
        made = Order.objects.bulk_create(objs)
        self.assertEqual([o.name for o in made], names)
        self.assert_exact_increasing(made)

    def test_bulk_create_of_objects_without_ids(self):
        from shop.models import Order
        names = self.names(50)
        made = Order.objects.bulk_create([Order(name=n) for n in names])
        digits = self.server_digits(names)
        self.assertEqual(len(digits), 50)
        if (5, 0) <= self.django_version < (6, 0):
            # Django 5's bulk_create returns the IDs of db_default but does
            # not set them on the objects (Django's ticket #36260, fixed in
            # 6.0): each pk is still the DatabaseDefault placeholder
            from django.db.models.expressions import DatabaseDefault
            for o in made:
                self.assertIsInstance(o.pk, DatabaseDefault)
            return
        self.assert_exact_increasing(made)

    # ---- paging by time --------------------------------------------------

    def test_page_by_time_is_a_primary_key_range_scan(self):
        from django.db import connection
        from django.db.models import BigIntegerField, DateTimeField, F, Func, Value
        from shop.models import Order
        # rows before the page, enough for the planner to prefer the index
        # for a page of 50 of them on its own, as on any real table
        with connection.cursor() as cur:
            cur.execute("""INSERT INTO shop_order (name)
                           SELECT 'before ' || g FROM generate_series(1, 20000) g""")
        time.sleep(0.1)         # past the milliseconds the 20,000 borrowed
        page = Order.objects.bulk_create(
            [Order(pk=i, name=n) for i, n in zip(self.block_of_ids(50), self.names(50))])
        time.sleep(0.1)
        Order.objects.create(name="after")
        with connection.cursor() as cur:
            cur.execute("ANALYZE shop_order")

        def created(expr):
            return Func(expr, function="id_to_timestamp", output_field=DateTimeField())

        def min_id_at(t):
            return Func(Value(t), function="min_id_at", output_field=BigIntegerField())

        first = Order.objects.annotate(at=created(F("id"))).get(pk=page[0].pk).at
        last = Order.objects.annotate(at=created(F("id"))).get(pk=page[-1].pk).at
        self.assertIsNotNone(first.tzinfo)
        start, end = first, last + timedelta(milliseconds=1)
        qs = (Order.objects.filter(id__gte=min_id_at(start), id__lt=min_id_at(end))
              .annotate(at=created(F("id"))).order_by("id"))
        rows = list(qs)
        self.assertEqual([o.pk for o in rows], [o.pk for o in page])
        for o in rows:
            self.assertTrue(start <= o.at < end, (o.at, start, end))
        plan = qs.explain()
        self.assertRegex(plan, r"(Index Scan|Index Only Scan|Bitmap Index Scan)"
                               r"( using| on) shop_order_pkey", plan)
        # min_id_at() of the times, folded to constants when planned
        self.assertRegex(plan, r"Index Cond: \(\(id >= '\d+'::bigint\) AND "
                               r"\(id < '\d+'::bigint\)\)", plan)

    # ---- JSON ------------------------------------------------------------

    def test_json_response_with_str_ids_reads_back_exact(self):
        from django.http import JsonResponse
        made = self.bulk_until_not_doubles()
        response = JsonResponse([{"id": str(o.pk), "name": o.name} for o in made],
                                safe=False)
        self.assertEqual(node_ids(response.content.decode()),
                         [("string", str(o.pk)) for o in made])
        # what the client sends back finds the row
        from shop.models import Order
        self.assertEqual(Order.objects.get(pk=str(made[-1].pk)).name, made[-1].name)

    def test_json_response_with_int_ids_loses_digits(self):
        from django.http import JsonResponse
        made = self.bulk_until_not_doubles()
        lost = not_doubles(o.pk for o in made)
        response = JsonResponse([{"id": i} for i in lost], safe=False)
        self.assertIn(f'"id": {lost[0]}', response.content.decode())
        back = node_ids(response.content.decode())
        self.assertEqual(len(back), len(lost))
        for i, (kind, digits) in zip(lost, back):
            self.assertEqual(kind, "number")
            self.assertNotEqual(digits, str(i))             # another ID,
            self.assertEqual(int(digits), int(float(i)))    # the nearest double

    def test_django_serializer_writes_pk_as_a_number(self):
        from django.core import serializers
        from shop.models import Order
        made = self.bulk_until_not_doubles()
        lost = not_doubles(o.pk for o in made)
        text = serializers.serialize("json", Order.objects.filter(pk__in=lost).order_by("pk"))
        objs = json.loads(text)
        self.assertEqual([o["pk"] for o in objs], lost)  # Python's json keeps them
        # the same text through JavaScript: each pk another number
        back = node_ids(text, "pk")
        self.assertEqual(len(back), len(lost))
        for i, (kind, digits) in zip(lost, back):
            self.assertEqual(kind, "number")
            self.assertEqual(int(digits), int(float(i)))

    # ---- the model inspectdb writes -----------------------------------------

    def test_inspectdb_model_sends_null_ids(self):
        from django.core.management import call_command
        from django.db import IntegrityError, connection
        from shop.models import LegacyOrder
        out = io.StringIO()
        call_command("inspectdb", "legacy_orders", stdout=out)
        self.assertRegex(out.getvalue(),
                         r"\n    id = models\.BigIntegerField\(primary_key=True\)\n",
                         out.getvalue())
        with self.assertRaises(IntegrityError) as caught:
            LegacyOrder.objects.create(name="legacy")
        self.assertIn('null value in column "id"', str(caught.exception))
        with connection.cursor() as cur:
            cur.execute("SELECT count(*) FROM legacy_orders")
            self.assertEqual(cur.fetchone()[0], 0)


if __name__ == "__main__":
    unittest.main()
