import django
from django.db import models

if django.VERSION >= (5, 0):
    class Order(models.Model):
        # db_default puts DEFAULT idgen_next() on the column, and Django 5
        # reads the ID back from INSERT ... RETURNING
        id = models.BigIntegerField(
            primary_key=True,
            db_default=models.Func(function="idgen_next",
                                   output_field=models.BigIntegerField()))
        name = models.TextField()
else:
    class Order(models.Model):
        # Before 5.0 a database default has no field option: the column is
        # made as a BigAutoField's, then migration 0001 moves it onto
        # idgen_next(), and Django still omits it from INSERT and reads it
        # back from RETURNING as it does for a serial
        id = models.BigAutoField(primary_key=True)
        name = models.TextField()


class LegacyOrder(models.Model):
    """What inspectdb writes for a table made by SQL with
    id bigint PRIMARY KEY DEFAULT idgen_next(): the default is not seen,
    and Django sends id = NULL on every insert."""
    id = models.BigIntegerField(primary_key=True)
    name = models.TextField()

    class Meta:
        managed = False
        db_table = "legacy_orders"
