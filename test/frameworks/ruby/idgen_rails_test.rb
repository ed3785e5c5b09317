# idgen in a Rails model, through Debian's ActiveRecord (ruby-activerecord,
# ruby-pg): the table made by a migration (db/migrate/) run with
# ActiveRecord's MigrationContext, IDs read back from create! and
# insert_all!, paging by time on the primary key, and IDs in JSON as
# JavaScript reads it.
#
# Run against a server with idgen preloaded; the connection comes from
# PGHOST, PGPORT and PGUSER, and the test makes its own database:
#
#     cd test/frameworks/ruby && ruby idgen_rails_test.rb

require "minitest/autorun"
require "open3"
require "securerandom"
require "active_record"

class IdgenRailsTest < Minitest::Test
  DB = "idgen_rails_app"
  MIGRATIONS = File.expand_path("db/migrate", __dir__)

  # What JavaScript's JSON.parse makes of each object's key (of each value,
  # when the key is ""): its type, and
  # for a number the integer the double holds (BigInt), since String() of
  # a double prints the shortest digits that read back as it, which for
  # some IDs are the ID's own
  NODE_READ = <<~JS
    const key = process.argv[1];
    let s = "";
    process.stdin.on("data", (d) => { s += d; }).on("end", () => {
      for (const o of [].concat(JSON.parse(s))) {
        const v = key === "" ? o : o[key];
        console.log(typeof v, typeof v === "number" ? BigInt(v).toString() : String(v));
      }
    });
  JS

  # The recipe of doc/frameworks.md: every bigint column as a JSON string,
  # as idgen_row_to_json writes it
  class ApplicationRecord < ActiveRecord::Base
    self.abstract_class = true

    def serializable_hash(options = nil)
      hash = super
      self.class.columns.each do |column|
        next unless column.sql_type == "bigint" && !hash[column.name].nil?

        hash[column.name] = hash[column.name].to_s
      end
      hash
    end
  end

  class Order < ApplicationRecord
  end

  # the same table without the recipe: Rails' default JSON
  class PlainOrder < ActiveRecord::Base
    self.table_name = "orders"
  end

  def self.connect(db)
    ActiveRecord::Base.establish_connection(
      adapter: "postgresql", database: db, host: ENV["PGHOST"],
      port: ENV["PGPORT"], username: ENV["PGUSER"])
    ActiveRecord::Base.connection
  end

  # once per run: the database, then the migration as db:migrate runs it
  def self.prepare
    return if @prepared

    admin = connect("postgres")
    admin.execute("DROP DATABASE IF EXISTS #{DB}")
    admin.execute("CREATE DATABASE #{DB}")
    connect(DB)
    ActiveRecord::Migration.verbose = false
    context =
      if ActiveRecord.version >= Gem::Version.new("7.1")
        ActiveRecord::MigrationContext.new([MIGRATIONS])
      else
        ActiveRecord::MigrationContext.new([MIGRATIONS], ActiveRecord::SchemaMigration)
      end
    context.migrate
    @prepared = true
    Minitest.after_run do
      connect("postgres").execute("DROP DATABASE IF EXISTS #{DB} WITH (FORCE)")
      ActiveRecord::Base.remove_connection
    end
  end

  def setup
    self.class.prepare
    # other test classes of the run connect elsewhere
    self.class.connect(DB)
  end

  def conn
    ActiveRecord::Base.connection
  end

  def names(count)
    tag = SecureRandom.hex(4)
    Array.new(count) { |i| "#{tag}-#{i}" }
  end

  def server_digits(names)
    sql = ActiveRecord::Base.sanitize_sql(
      ["SELECT name, id::text FROM orders WHERE name IN (?)", names])
    conn.select_rows(sql).to_h
  end

  def assert_exact_increasing(ids, names)
    ids.each { |i| assert_kind_of(Integer, i) }
    assert_equal(ids.size, ids.uniq.size)
    assert_equal(ids.sort, ids)
    digits = server_digits(names)
    assert_equal(names.map { |n| digits.fetch(n) }, ids.map(&:to_s))
  end

  def not_doubles(ids)
    ids.reject { |i| i.to_f.to_i == i }
  end

  def node_ids(json, key = "id")
    out, status = Open3.capture2("node", "-e", NODE_READ, key, stdin_data: json)
    assert(status.success?, "node failed")
    out.lines.map { |line| line.chomp.split(" ", 2) }
  end

  # the same for a JSON array of values (what pluck gives)
  def node_values(json)
    node_ids(json, "")
  end

  # What a JavaScript client sends back for each object's id after
  # JSON.parse: JSON.stringify of the value it holds
  def node_sent_back(json)
    script = "let s = ''; process.stdin.on('data', (d) => { s += d; }).on('end', () => " \
             "{ for (const o of JSON.parse(s)) console.log(JSON.stringify(o.id)); });"
    out, status = Open3.capture2("node", "-e", script, stdin_data: json)
    assert(status.success?, "node failed")
    out.lines.map(&:chomp)
  end

  # orders made 50 at a time until at least `want` of their IDs are not
  # doubles: the IDs a JSON number cannot carry to JavaScript
  def insert_until_not_doubles(want = 10)
    ids = []
    20.times do
      ids += Order.insert_all!(names(50).map { |n| { name: n } }, returning: %w[id]).rows.flatten
      return ids if not_doubles(ids).size >= want
    end
    flunk("no IDs above 2^53 that a double cannot hold")
  end

  # ---- the migration ------------------------------------------------------

  def test_migration_made_the_column
    row = conn.select_rows(<<~SQL).first
      SELECT data_type, column_default, is_identity, pg_get_serial_sequence('orders', 'id')
        FROM information_schema.columns
       WHERE table_name = 'orders' AND column_name = 'id'
    SQL
    assert_equal(["bigint", "idgen_next()", "NO", nil], row)
    assert_equal(["20261201000000"], conn.select_values("SELECT version FROM schema_migrations"))
    column = Order.columns_hash["id"]
    assert_equal("idgen_next()", column.default_function)
    assert_equal("bigint", column.sql_type)
  end

  # ---- IDs read back from inserts -------------------------------------------

  def test_create_reads_the_id_back
    first, second = names(2).map { |n| Order.create!(name: n) }
    assert_operator(first.id, :>, 2**53)
    assert_exact_increasing([first.id, second.id], [first.name, second.name])
    assert_equal(first.name, Order.find(first.id).name)
  end

  # Rails 7.0's new applications insert every column (partial_inserts off;
  # 6.1 calls it partial_writes): a column with a database default is still
  # left to it
  def test_create_without_partial_inserts
    setting = Order.respond_to?(:partial_inserts=) ? :partial_inserts : :partial_writes
    before = Order.public_send(setting)
    Order.public_send(:"#{setting}=", false)
    begin
      order = Order.create!(name: names(1).first)
    ensure
      Order.public_send(:"#{setting}=", before)
    end
    assert_exact_increasing([order.id], [order.name])
  end

  def test_insert_all_reads_the_ids_back
    batch = names(50)
    result = Order.insert_all!(batch.map { |n| { name: n } }, returning: %w[id name])
    assert_equal(batch, result.rows.map(&:last))
    assert_exact_increasing(result.rows.map(&:first), batch)
  end

  # ---- paging by time -------------------------------------------------------

  def test_page_by_time_is_a_primary_key_range_scan
    # rows before the page, enough for the planner to prefer the index for a
    # page of 50 of them on its own, as on any real table
    conn.execute("INSERT INTO orders (name) SELECT 'before ' || g FROM generate_series(1, 20000) g")
    sleep(0.1) # past the milliseconds the 20,000 borrowed
    batch = names(50)
    page = Order.insert_all!(batch.map { |n| { name: n } }, returning: %w[id]).rows.flatten
    sleep(0.1)
    Order.create!(name: "after")
    conn.execute("ANALYZE orders")

    created = Arel.sql("id_to_timestamp(id)")
    first = Order.where(id: page.first).pick(created)
    last = Order.where(id: page.last).pick(created)
    assert_kind_of(Time, first)
    start = first
    stop = last + Rational(1, 1000)
    relation = Order.where("id >= min_id_at(?) AND id < min_id_at(?)", start, stop).order(:id)
    rows = relation.select("orders.*, id_to_timestamp(id) AS created_at").to_a
    assert_equal(page, rows.map(&:id))
    rows.each { |o| assert(start <= o.created_at && o.created_at < stop, o.created_at.inspect) }

    plan = relation.explain
    plan = plan.inspect unless plan.is_a?(String) # 7.1's ExplainProxy
    assert_match(/(Index Scan|Index Only Scan|Bitmap Index Scan)( using| on) orders_pkey/, plan)
    assert_match(/Index Cond: \(\(id >= '\d+'::bigint\) AND \(id < '\d+'::bigint\)\)/, plan)
  end

  # ---- JSON -----------------------------------------------------------------

  def test_to_json_with_the_recipe_reads_back_exact
    ids = insert_until_not_doubles
    json = Order.where(id: ids).order(:id).to_json
    assert_equal(ids.map { |i| ["string", i.to_s] }, node_ids(json))
    assert_equal(ids.first.to_s, Order.find(ids.first).as_json["id"])
    # what the client sends back finds the row
    assert_equal(ids.last, Order.find(ids.last.to_s).id)
  end

  # pluck returns the column's values, not records: serializable_hash, and
  # the recipe in it, never sees them
  def test_pluck_to_json_goes_around_the_recipe
    lost = not_doubles(insert_until_not_doubles)
    json = Order.where(id: lost).order(:id).pluck(:id).to_json
    back = node_values(json)
    assert_equal(lost.size, back.size)
    lost.zip(back).each do |i, (kind, digits)|
      assert_equal("number", kind)
      refute_equal(i.to_s, digits)
      assert_equal(i.to_f.to_i.to_s, digits)
    end
  end

  def test_pluck_with_to_s_reads_back_exact
    ids = insert_until_not_doubles
    json = Order.where(id: ids).order(:id).pluck(:id).map(&:to_s).to_json
    assert_equal(ids.map { |i| ["string", i.to_s] }, node_values(json))
    pairs = Order.where(id: ids).order(:id).pluck(:id, :name)
                 .map { |id, name| { id: id.to_s, name: name } }
    assert_equal(ids.map { |i| ["string", i.to_s] }, node_ids(pairs.to_json))
  end

  # The number JavaScript sends back, as JSON.stringify writes it: the
  # shortest digits of the double, another ID
  def test_find_by_an_id_that_went_through_a_double
    ids = insert_until_not_doubles
    json = PlainOrder.where(id: ids).order(:id).to_json
    sent = node_sent_back(json)
    i = ids.each_index.find { |k| sent[k] != ids[k].to_s }
    refute_nil(i, "an ID whose number JavaScript writes with other digits")
    found = Order.find_by(id: sent[i])
    refute_equal(ids[i], found&.id)
    found_with_find =
      begin
        Order.find(sent[i])
      rescue ActiveRecord::RecordNotFound
        nil
      end
    refute_equal(ids[i], found_with_find&.id)
  end

  def test_default_to_json_loses_digits
    lost = not_doubles(insert_until_not_doubles)
    json = PlainOrder.where(id: lost).order(:id).to_json
    assert_equal(lost, JSON.parse(json).map { |o| o["id"] }) # Ruby's JSON keeps them
    back = node_ids(json)
    assert_equal(lost.size, back.size)
    lost.zip(back).each do |i, (kind, digits)|
      assert_equal("number", kind)
      refute_equal(i.to_s, digits)          # another ID,
      assert_equal(i.to_f.to_i.to_s, digits) # the nearest double
    end
  end
end
