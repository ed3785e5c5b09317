# The orders table of idgen_rails_test.rb, keyed on idgen IDs.  An
# application names the Rails version it was written for,
# ActiveRecord::Migration[7.2]; the tests run on several.
class CreateOrders < ActiveRecord::Migration[ActiveRecord::Migration.current_version]
  def change
    enable_extension "idgen"
    create_table :orders, id: :bigint, default: -> { "idgen_next()" } do |t|
      t.text :name, null: false
    end
  end
end
