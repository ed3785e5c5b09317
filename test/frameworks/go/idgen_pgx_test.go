// idgen from Go through pgx, Debian's packaged driver (Debian packages no Go
// ORM: the table is made by SQL, as Go services make it with a migration
// tool of their choice): IDs read back from INSERT ... RETURNING, paging by
// time on the primary key with query parameters, and IDs in JSON as
// JavaScript reads it.
//
// Run against a server with idgen preloaded; the connection comes from
// PGHOST, PGPORT and PGUSER, and the test makes its own database.  run.sh
// runs it in GOPATH mode on Debian's packaged sources, offline.
package frameworks

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

const db = "idgen_go"

const table = `CREATE TABLE orders (
    id   bigint PRIMARY KEY DEFAULT idgen_next(),
    name text NOT NULL)`

var (
	ctx  = context.Background()
	conn *Conn
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	admin, err := connect(ctx, "dbname=postgres")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer admin.Close(ctx)
	for _, sql := range []string{
		"DROP DATABASE IF EXISTS " + db + " WITH (FORCE)",
		"CREATE DATABASE " + db,
	} {
		if _, err := admin.Exec(ctx, sql); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	defer admin.Exec(ctx, "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)")

	conn, err = connect(ctx, "dbname="+db)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer conn.Close(ctx)
	for _, sql := range []string{"CREATE EXTENSION idgen", table} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	fmt.Printf("pgx %s, %s\n", pgxVersion, serverVersion())
	return m.Run()
}

func serverVersion() string {
	var v string
	if err := conn.QueryRow(ctx, "SHOW server_version").Scan(&v); err != nil {
		return err.Error()
	}
	return "PostgreSQL " + v
}

// ---- helpers ----------------------------------------------------------------

var tagCounter int

func names(n int) []string {
	tagCounter++
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%d-%d-%d", os.Getpid(), tagCounter, i)
	}
	return out
}

// insert makes one row per name in one statement, and returns their IDs
// in the order of the names
func insert(t *testing.T, batch []string) []int64 {
	t.Helper()
	rows, err := conn.Query(ctx,
		"INSERT INTO orders (name) SELECT unnest($1::text[]) RETURNING id, name", batch)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []int64
	for i := 0; rows.Next(); i++ {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			t.Fatal(err)
		}
		if name != batch[i] {
			t.Fatalf("row %d is %q, not %q", i, name, batch[i])
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}

// serverDigits: id::text of each named row, as the server writes it
func serverDigits(t *testing.T, batch []string) map[string]string {
	t.Helper()
	rows, err := conn.Query(ctx,
		"SELECT name, id::text FROM orders WHERE name = ANY($1)", batch)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, digits string
		if err := rows.Scan(&name, &digits); err != nil {
			t.Fatal(err)
		}
		out[name] = digits
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func assertExactIncreasing(t *testing.T, ids []int64, batch []string) {
	t.Helper()
	if len(ids) != len(batch) {
		t.Fatalf("%d IDs for %d rows", len(ids), len(batch))
	}
	digits := serverDigits(t, batch)
	for i, id := range ids {
		if i > 0 && id <= ids[i-1] {
			t.Fatalf("ID %d is not above the one before, %d", id, ids[i-1])
		}
		if got, want := strconv.FormatInt(id, 10), digits[batch[i]]; got != want {
			t.Fatalf("row %q: read back %s, the server has %s", batch[i], got, want)
		}
	}
}

func notDoubles(ids []int64) []int64 {
	var out []int64
	for _, id := range ids {
		if int64(float64(id)) != id {
			out = append(out, id)
		}
	}
	return out
}

// insertUntilNotDoubles makes orders 50 at a time until at least want of
// their IDs are not doubles: the IDs a JSON number cannot carry to
// JavaScript
func insertUntilNotDoubles(t *testing.T, want int) []int64 {
	t.Helper()
	var ids []int64
	for i := 0; i < 20; i++ {
		ids = append(ids, insert(t, names(50))...)
		if len(notDoubles(ids)) >= want {
			return ids
		}
	}
	t.Fatal("no IDs above 2^53 that a double cannot hold")
	return nil
}

// What JavaScript's JSON.parse makes of each object's key: its type, and
// for a number the integer the double holds (BigInt), since String() of a
// double prints the shortest digits that read back as it, which for some
// IDs are the ID's own
const nodeRead = `
const key = process.argv[1];
let s = "";
process.stdin.on("data", (d) => { s += d; }).on("end", () => {
  for (const o of [].concat(JSON.parse(s))) {
    const v = o[key];
    console.log(typeof v, typeof v === "number" ? BigInt(v).toString() : String(v));
  }
});
`

func nodeIDs(t *testing.T, text []byte) [][2]string {
	t.Helper()
	cmd := exec.Command("node", "-e", nodeRead, "id")
	cmd.Stdin = strings.NewReader(string(text))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var back [][2]string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		kind, digits, _ := strings.Cut(line, " ")
		back = append(back, [2]string{kind, digits})
	}
	return back
}

// ---- the table ----------------------------------------------------------------

func TestTableMadeBySQL(t *testing.T) {
	var dataType, def, identity string
	var seq *string
	err := conn.QueryRow(ctx, `SELECT data_type, column_default, is_identity,
	                                  pg_get_serial_sequence('orders', 'id')
	                             FROM information_schema.columns
	                            WHERE table_name = 'orders' AND column_name = 'id'`).
		Scan(&dataType, &def, &identity, &seq)
	if err != nil {
		t.Fatal(err)
	}
	if dataType != "bigint" || def != "idgen_next()" || identity != "NO" || seq != nil {
		t.Fatalf("id is %s DEFAULT %s, identity %s, sequence %v", dataType, def, identity, seq)
	}
}

// ---- IDs read back from inserts -------------------------------------------------

func TestInsertReturningOneRow(t *testing.T) {
	batch := names(2)
	var ids []int64
	for _, name := range batch {
		var id int64
		err := conn.QueryRow(ctx,
			"INSERT INTO orders (name) VALUES ($1) RETURNING id", name).Scan(&id)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if ids[0] <= 1<<53 {
		t.Fatalf("ID %d is not above 2^53", ids[0])
	}
	assertExactIncreasing(t, ids, batch)
}

func TestInsertReturning50RowsInOneStatement(t *testing.T) {
	batch := names(50)
	assertExactIncreasing(t, insert(t, batch), batch)
}

// ---- paging by time ---------------------------------------------------------------

const page = `SELECT id, id_to_timestamp(id) FROM orders
 WHERE id >= min_id_at($1) AND id < min_id_at($2) ORDER BY id`

func TestPageByTimeIsAPrimaryKeyRangeScan(t *testing.T) {
	// rows before the page, enough for the planner to prefer the index for a
	// page of 50 of them on its own, as on any real table
	if _, err := conn.Exec(ctx, `INSERT INTO orders (name)
		SELECT 'before ' || g FROM generate_series(1, 20000) g`); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // past the milliseconds the 20,000 borrowed
	ids := insert(t, names(50))
	time.Sleep(100 * time.Millisecond)
	insert(t, names(1))
	if _, err := conn.Exec(ctx, "ANALYZE orders"); err != nil {
		t.Fatal(err)
	}

	var first, last time.Time
	for id, at := range map[int64]*time.Time{ids[0]: &first, ids[len(ids)-1]: &last} {
		if err := conn.QueryRow(ctx, "SELECT id_to_timestamp($1)", id).Scan(at); err != nil {
			t.Fatal(err)
		}
	}
	start, end := first, last.Add(time.Millisecond)

	rows, err := conn.Query(ctx, page, start, end)
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for rows.Next() {
		var id int64
		var at time.Time
		if err := rows.Scan(&id, &at); err != nil {
			t.Fatal(err)
		}
		if at.Before(start) || !at.Before(end) {
			t.Errorf("ID %d decodes to %v, outside [%v, %v)", id, at, start, end)
		}
		got = append(got, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(ids) {
		t.Fatalf("the page has %v, not %v", got, ids)
	}

	// EXPLAIN of that very statement, with the same parameters
	rows, err = conn.Query(ctx, "EXPLAIN "+page, start, end)
	if err != nil {
		t.Fatal(err)
	}
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	rows.Close()
	text := strings.Join(plan, "\n")
	for _, re := range []string{
		`(Index Scan|Index Only Scan|Bitmap Index Scan)( using| on) orders_pkey`,
		`Index Cond: \(\(id >= '\d+'::bigint\) AND \(id < '\d+'::bigint\)\)`,
	} {
		if !regexp.MustCompile(re).MatchString(text) {
			t.Fatalf("the plan does not match %s:\n%s", re, text)
		}
	}
}

// ---- JSON ---------------------------------------------------------------------------

// The recipe of doc/frameworks.md: ",string" writes the int64 as a JSON
// string, and reads it back from one
type order struct {
	ID   int64  `json:"id,string"`
	Name string `json:"name"`
}

// encoding/json's default: a JSON number
type plainOrder struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

func TestJSONStringTagReadsBackExact(t *testing.T) {
	ids := insertUntilNotDoubles(t, 10)
	var orders []order
	for _, id := range ids {
		orders = append(orders, order{ID: id, Name: "o"})
	}
	text, err := json.Marshal(orders)
	if err != nil {
		t.Fatal(err)
	}
	back := nodeIDs(t, text)
	if len(back) != len(ids) {
		t.Fatalf("node read %d objects of %d", len(back), len(ids))
	}
	for i, id := range ids {
		if want := [2]string{"string", strconv.FormatInt(id, 10)}; back[i] != want {
			t.Fatalf("JSON.parse gave %v for %v", back[i], want)
		}
	}
	var again []order
	if err := json.Unmarshal(text, &again); err != nil || again[0].ID != ids[0] {
		t.Fatalf("Go reads back %v (%v), not %d", again, err, ids[0])
	}
}

func TestJSONNumbersLoseDigits(t *testing.T) {
	lost := notDoubles(insertUntilNotDoubles(t, 10))
	sort.Slice(lost, func(i, j int) bool { return lost[i] < lost[j] })
	var orders []plainOrder
	for _, id := range lost {
		orders = append(orders, plainOrder{ID: id, Name: "o"})
	}
	text, err := json.Marshal(orders)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(text), fmt.Sprintf(`"id":%d,`, lost[0])) {
		t.Fatalf("encoding/json wrote %s", text)
	}
	back := nodeIDs(t, text)
	if len(back) != len(lost) {
		t.Fatalf("node read %d objects of %d", len(back), len(lost))
	}
	for i, id := range lost {
		exact := strconv.FormatInt(id, 10)
		double := strconv.FormatInt(int64(float64(id)), 10)
		if back[i][0] != "number" || back[i][1] == exact || back[i][1] != double {
			t.Fatalf("JSON.parse gave %v for %s (the nearest double is %s)", back[i], exact, double)
		}
	}
}
