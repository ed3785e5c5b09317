# What Rails' schema tools do with a database with idgen, through Debian's
# ActiveRecord (ruby-activerecord, ruby-pg): db:schema:dump writes
# db/schema.rb with ActiveRecord::SchemaDumper, and db:schema:load (behind
# db:test:prepare and every test run of a Rails app) runs that file in an
# empty database.  With a table of idgen in the schema (1.3's layout
# history) schema.rb held it with force: :cascade, and the load failed:
# "cannot drop table idgen_layout_versions because extension idgen
# requires it".
#
# Run against a server with idgen preloaded; the connection comes from
# PGHOST, PGPORT and PGUSER, and the test makes its own databases:
#
#     cd test/frameworks/ruby && ruby schema_rails_test.rb

require "minitest/autorun"
require "stringio"
require "active_record"

class SchemaRailsTest < Minitest::Test
  SOURCE = "idgen_rails_source"
  TARGET = "idgen_rails_target"

  class Order < ActiveRecord::Base
  end

  def connect(db)
    ActiveRecord::Base.establish_connection(
      adapter: "postgresql", database: db, host: ENV["PGHOST"],
      port: ENV["PGPORT"], username: ENV["PGUSER"])
    ActiveRecord::Base.connection
  end

  def setup
    admin = connect("postgres")
    [SOURCE, TARGET].each do |db|
      admin.execute("DROP DATABASE IF EXISTS #{db}")
      admin.execute("CREATE DATABASE #{db}")
    end
    src = connect(SOURCE)
    src.execute("CREATE EXTENSION idgen")
    src.execute("CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT idgen_next(), name text NOT NULL)")
  end

  def teardown
    admin = connect("postgres")
    [SOURCE, TARGET].each { |db| admin.execute("DROP DATABASE IF EXISTS #{db}") }
    ActiveRecord::Base.remove_connection
  end

  def test_schema_dump_then_load
    out = StringIO.new
    conn = connect(SOURCE)
    # Rails 7.2 dumps from a pool, earlier ones from a connection
    source = ActiveRecord.version >= Gem::Version.new("7.2") ? ActiveRecord::Base.connection_pool : conn
    ActiveRecord::SchemaDumper.dump(source, out)
    schema = out.string
    assert_match(/enable_extension "idgen"/, schema)
    assert_match(/create_table "orders"/, schema)
    assert_match(/default: -> \{ "idgen_next\(\)" \}/, schema)
    assert_equal(["orders"], schema.scan(/create_table "([^"]+)"/).flatten, schema)

    # db:schema:load, as Rails runs it: the file, in an empty database
    connect(TARGET)
    ActiveRecord::Migration.verbose = false
    eval(schema) # rubocop:disable Security/Eval
    order = Order.create!(name: "first")
    assert_operator(order.id, :>, 2**53)
    shard = Order.connection.select_value("SELECT id_to_shard(#{order.id})")
    assert_kind_of(Integer, shard)
  end
end
