# Alembic's environment for test_sqlalchemy.py: the connection comes from
# the caller (config.attributes), as in Alembic's recipe for running
# migrations from an application's code
import os
import sys

from alembic import context

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from sa_shop import Base  # noqa: E402

context.configure(connection=context.config.attributes["connection"],
                  target_metadata=Base.metadata,
                  compare_server_default=True)
with context.begin_transaction():
    context.run_migrations()
