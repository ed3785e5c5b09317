"""The SQLAlchemy models of test_sqlalchemy.py, whose tables Alembic makes
(alembic_shop/): the declarative form of SQLAlchemy 2.0 where it exists,
1.4's otherwise, the same table either way."""

import sqlalchemy as sa

if int(sa.__version__.split(".")[0]) >= 2:
    from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

    class Base(DeclarativeBase):
        pass

    class Order(Base):
        __tablename__ = "orders"
        id: Mapped[int] = mapped_column(sa.BigInteger, primary_key=True,
                                        server_default=sa.text("idgen_next()"))
        name: Mapped[str] = mapped_column(sa.Text)
else:
    from sqlalchemy.orm import declarative_base

    Base = declarative_base()

    class Order(Base):
        __tablename__ = "orders"
        id = sa.Column(sa.BigInteger, primary_key=True,
                       server_default=sa.text("idgen_next()"))
        name = sa.Column(sa.Text, nullable=False)
