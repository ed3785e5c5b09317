"""orders, keyed on idgen IDs

Revision ID: 0001
Revises:
"""
import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade():
    op.execute("CREATE EXTENSION IF NOT EXISTS idgen")
    op.create_table(
        "orders",
        sa.Column("id", sa.BigInteger, primary_key=True,
                  server_default=sa.text("idgen_next()")),
        sa.Column("name", sa.Text, nullable=False),
    )


def downgrade():
    op.drop_table("orders")
