import django
from django.contrib.postgres.operations import CreateExtension
from django.db import migrations, models

if django.VERSION >= (5, 0):
    order_id = models.BigIntegerField(
        db_default=models.Func(function="idgen_next",
                               output_field=models.BigIntegerField()),
        primary_key=True, serialize=False)
    to_idgen = []
else:
    order_id = models.BigAutoField(primary_key=True, serialize=False)
    # the column's sequence (serial before Django 4.1, IDENTITY since)
    # gives way to DEFAULT idgen_next()
    to_idgen = [migrations.RunSQL(
        "SELECT idgen_convert_column('shop_order', 'id')",
        migrations.RunSQL.noop)]


class Migration(migrations.Migration):

    initial = True

    dependencies = []

    operations = [
        CreateExtension("idgen"),
        migrations.CreateModel(
            name="Order",
            fields=[
                ("id", order_id),
                ("name", models.TextField()),
            ],
        ),
        *to_idgen,
        migrations.CreateModel(
            name="LegacyOrder",
            fields=[
                ("id", models.BigIntegerField(primary_key=True, serialize=False)),
                ("name", models.TextField()),
            ],
            options={
                "db_table": "legacy_orders",
                "managed": False,
            },
        ),
    ]
