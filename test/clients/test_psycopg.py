"""IDs minted by DEFAULT idgen_next() through psycopg 3 (Debian's
python3-psycopg): the text and binary protocols, query parameters, COPY,
and JSON.

Run with Debian's interpreter, against a server with idgen preloaded and
CREATE EXTENSION idgen done; the connection comes from PGHOST, PGPORT,
PGUSER and PGDATABASE:

    /usr/bin/python3 -m unittest -v test_psycopg
"""

import json
import unittest

import psycopg

TWO_53 = 2 ** 53


class IdgenPsycopg(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.conn = psycopg.connect(autocommit=True)
        cls.conn.execute("""CREATE TEMP TABLE py_orders (
            id bigint PRIMARY KEY DEFAULT idgen_next(),
            name text)""")
        # one statement: IDs of one millisecond are consecutive, some odd
        cur = cls.conn.execute("""INSERT INTO py_orders (name)
            SELECT 'order ' || g FROM generate_series(1, 50) g RETURNING id""")
        cls.ids = sorted(row[0] for row in cur.fetchall())

    @classmethod
    def tearDownClass(cls):
        cls.conn.close()

    def test_ids_above_2_53(self):
        self.assertEqual(len(self.ids), 50)
        for i in self.ids:
            self.assertGreater(i, TWO_53)
        odd = [i for i in self.ids if i % 2 == 1]
        self.assertTrue(odd)
        for i in odd:
            self.assertNotEqual(int(float(i)), i)

    def test_text_protocol_int(self):
        rows = self.conn.execute(
            "SELECT id, id::text AS digits FROM py_orders ORDER BY id").fetchall()
        self.assertEqual([r[0] for r in rows], self.ids)
        for id_, digits in rows:
            self.assertIs(type(id_), int)
            self.assertEqual(str(id_), digits)

    def test_binary_protocol_int(self):
        with self.conn.cursor(binary=True) as cur:
            cur.execute("SELECT id, id::text AS digits FROM py_orders ORDER BY id")
            self.assertEqual(cur.pgresult.fformat(0), 1)     # binary
            rows = cur.fetchall()
        self.assertEqual([r[0] for r in rows], self.ids)
        for id_, digits in rows:
            self.assertIs(type(id_), int)
            self.assertEqual(str(id_), digits)

    def test_default_idgen_next_is_int(self):
        minted = self.conn.execute("SELECT idgen_next()").fetchone()[0]
        self.assertIs(type(minted), int)
        self.assertGreater(minted, self.ids[-1])
        arr = self.conn.execute(
            "SELECT ARRAY[%s::bigint]", (self.ids[0],)).fetchone()[0]
        self.assertEqual(arr, [self.ids[0]])

    def test_parameters(self):
        for binary in (False, True):
            with self.conn.cursor(binary=binary) as cur:
                for i in self.ids:
                    cur.execute(
                        "SELECT id, %s::bigint FROM py_orders WHERE id = %s",
                        (i, i))
                    self.assertEqual(cur.fetchall(), [(i, i)])
                    # a parameter sent in binary format as well
                    cur.execute("SELECT id FROM py_orders WHERE id = %b", (i,))
                    self.assertEqual(cur.fetchall(), [(i,)])

    def test_copy_out_text_and_binary(self):
        with self.conn.cursor() as cur:
            with cur.copy("COPY (SELECT id FROM py_orders ORDER BY id) TO STDOUT") as copy:
                text_rows = [row for row in copy.rows()]
            self.assertEqual(text_rows, [(str(i),) for i in self.ids])
            with cur.copy("COPY (SELECT id FROM py_orders ORDER BY id) TO STDOUT (FORMAT binary)") as copy:
                copy.set_types(["int8"])
                binary_rows = [row for row in copy.rows()]
            self.assertEqual(binary_rows, [(i,) for i in self.ids])

    def test_copy_in_text_and_binary(self):
        for fmt in ("text", "binary"):
            with self.conn.cursor() as cur:
                cur.execute(
                    "CREATE TEMP TABLE py_copy (id bigint PRIMARY KEY, name text)")
                with cur.copy(f"COPY py_copy (id, name) FROM STDIN (FORMAT {fmt})") as copy:
                    if fmt == "binary":
                        copy.set_types(["int8", "text"])
                    for i in self.ids:
                        copy.write_row((i, "copied"))
                cur.execute("SELECT id FROM py_copy ORDER BY id")
                self.assertEqual([r[0] for r in cur.fetchall()], self.ids, fmt)
                cur.execute("""SELECT count(*) FROM py_copy
                                WHERE id IN (SELECT id FROM py_orders)""")
                self.assertEqual(cur.fetchone()[0], len(self.ids), fmt)
                cur.execute("DROP TABLE py_copy")

    def test_json_numbers_are_exact_ints(self):
        # psycopg reads json and jsonb with Python's json module, whose
        # integers are exact: the number routes lose nothing here
        for q in ("SELECT json_agg(row_to_json(t) ORDER BY t.id) FROM py_orders AS t",
                  "SELECT jsonb_agg(to_jsonb(t) ORDER BY t.id) FROM py_orders AS t",
                  "SELECT json_agg(json_build_object('id', id) ORDER BY id) FROM py_orders"):
            objs = self.conn.execute(q).fetchone()[0]
            self.assertEqual([o["id"] for o in objs], self.ids, q)
            for o in objs:
                self.assertIs(type(o["id"]), int)

    def test_json_helper_strings(self):
        for q in ("SELECT json_agg(idgen_row_to_json(t) ORDER BY t.id) FROM py_orders AS t",
                  "SELECT jsonb_agg(idgen_row_to_jsonb(t) ORDER BY t.id) FROM py_orders AS t"):
            objs = self.conn.execute(q).fetchone()[0]
            self.assertEqual([o["id"] for o in objs], [str(i) for i in self.ids], q)
            text = self.conn.execute(f"SELECT j::text FROM ({q}) AS q(j)").fetchone()[0]
            self.assertEqual([int(o["id"]) for o in json.loads(text)], self.ids)


if __name__ == "__main__":
    unittest.main()
